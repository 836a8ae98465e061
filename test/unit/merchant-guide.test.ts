import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"

// The guide's signature snippets in its five languages run in test/integration/merchant-guide-snippets.test.ts.
describe("the merchant's documents", () => {
  it("name no file of the service's source (a merchant never opens src/)", () => {
    for (const document of ["docs/merchant-guide.md", "sdk/README.md"]) expect(readFileSync(document, "utf8")).not.toMatch(/\bsrc\//)
  })

  it("are linked first from the README", () => {
    const firstLink = readFileSync("README.md", "utf8").match(/\]\(([^)]+)\)/)
    expect(firstLink?.[1]).toBe("docs/merchant-guide.md")
  })
})
