import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { statechartFiles } from "../src/lifecycle/StatechartExport.ts"

const directory = join(import.meta.dirname, "..", "statecharts")
mkdirSync(directory, { recursive: true })
const files = statechartFiles()
for (const [name, content] of Object.entries(files)) writeFileSync(join(directory, name), content)
console.log(`wrote ${Object.keys(files).length} files to statecharts/`)

// The SVGs: each Mermaid chart drawn by Mermaid itself in Debian's chromium (no download).
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
if (!existsSync(CHROMIUM)) {
  console.log(`no SVGs: ${CHROMIUM} is missing (apt-get install -y chromium)`)
  process.exit(0)
}
const { chromium } = await import("playwright-core")
const mermaidBundle = readFileSync(createRequire(import.meta.url).resolve("mermaid/dist/mermaid.min.js"), "utf8")
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] })
try {
  const page = await browser.newPage()
  await page.setContent("<!doctype html><html><body></body></html>")
  await page.addScriptTag({ content: mermaidBundle })
  for (const name of Object.keys(files).filter((file) => file.endsWith(".mmd"))) {
    const svg = await page.evaluate(async ([id, source]) => {
      const mermaid = (globalThis as any).mermaid
      mermaid.initialize({ startOnLoad: false, theme: "neutral", securityLevel: "strict" })
      return (await mermaid.render(id, source)).svg as string
    }, [name.replace(/\W/g, "_"), files[name]] as const)
    writeFileSync(join(directory, name.replace(/\.mmd$/, ".svg")), `${svg}\n`)
    console.log(`drew statecharts/${name.replace(/\.mmd$/, ".svg")}`)
  }
} finally {
  await browser.close()
}
