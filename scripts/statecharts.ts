import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { statechartFiles } from "../src/lifecycle/StatechartExport.ts"

const directory = join(import.meta.dirname, "..", "statecharts")
mkdirSync(directory, { recursive: true })
for (const [name, content] of Object.entries(statechartFiles())) writeFileSync(join(directory, name), content)
console.log(`wrote ${Object.keys(statechartFiles()).length} files to statecharts/`)
