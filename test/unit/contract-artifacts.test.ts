import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { ARTIFACTS_DIR, artifactJson, compileContracts, solidityFiles } from "../../scripts/contracts/compile.ts"

describe("committed contract artifacts", () => {
  // solc-js compiles in WebAssembly: a few seconds, more on a busy machine.
  it("are exactly what the pinned solc compiles from contracts/*.sol (run `npm run contracts` after a change)", () => {
    const compiled = compileContracts()
    const names = solidityFiles().map((file) => file.replace(/\.sol$/, ""))
    expect(compiled.map((artifact) => artifact.contractName).sort()).toEqual(names)
    expect(readdirSync(ARTIFACTS_DIR).sort()).toEqual(names.map((name) => `${name}.json`))
    for (const artifact of compiled) {
      expect(readFileSync(join(ARTIFACTS_DIR, `${artifact.contractName}.json`), "utf8")).toBe(artifactJson(artifact))
    }
  }, 120_000)
})
