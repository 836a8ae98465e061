/** `npm run contracts`: compiles contracts/*.sol into contracts/artifacts/<Name>.json (a unit test checks they are current). */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { ARTIFACTS_DIR, artifactJson, compileContracts } from "./contracts/compile.ts"

const artifacts = compileContracts()
mkdirSync(ARTIFACTS_DIR, { recursive: true })
const current = new Set(artifacts.map((artifact) => `${artifact.contractName}.json`))
for (const stale of readdirSync(ARTIFACTS_DIR).filter((file) => file.endsWith(".json") && !current.has(file))) {
  rmSync(join(ARTIFACTS_DIR, stale))
}
for (const artifact of artifacts) {
  writeFileSync(join(ARTIFACTS_DIR, `${artifact.contractName}.json`), artifactJson(artifact))
  console.log(`contracts/artifacts/${artifact.contractName}.json`)
}
