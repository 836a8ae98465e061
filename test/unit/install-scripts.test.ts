import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const ROOT = join(import.meta.dirname, "..", "..")
const readJson = (file: string) => JSON.parse(readFileSync(join(ROOT, file), "utf8"))

describe("decisions.md: no dependency runs an install script", () => {
  it("allowScripts denies every locked package that has an install script, the four the ruling names", () => {
    const lock = readJson("package-lock.json") as { packages: Record<string, { hasInstallScript?: boolean }> }
    const withScripts = Object.entries(lock.packages)
      .filter(([, entry]) => entry.hasInstallScript === true)
      .map(([path]) => path.split("node_modules/").at(-1))
      .sort()
    expect(withScripts).toEqual(["bigint-buffer", "bufferutil", "esbuild", "utf-8-validate"])
    expect(readJson("package.json").allowScripts).toEqual(Object.fromEntries(withScripts.map((name) => [name, false])))
  })
})
