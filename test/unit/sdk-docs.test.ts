import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"

// How a merchant gets the SDK (issue #53): the tarball `npm pack` builds, or the registry once it
// is published; never a link into this repository or a bundle of its source.
describe("the merchant guide and the SDK's README", () => {
  for (const document of ["docs/merchant-guide.md", "sdk/README.md"]) {
    it(`${document} installs the package: the npm pack tarball today, the registry command once published`, () => {
      const text = readFileSync(document, "utf8")
      expect(text).toMatch(/cd sdk && npm pack/)
      expect(text).toMatch(/npm install \/path\/to\/checkout-invoicing-sdk-0\.1\.0\.tgz/)
      expect(text).toContain("npm install @checkout-invoicing/sdk")
      expect(text).not.toMatch(/\blink(ed)? (it|the package|the sdk)\b|\bbundle (it|the sdk)\b/i)
    })

    it(`${document} recommends maxRetries: 0 inside request and webhook handlers`, () => {
      expect(readFileSync(document, "utf8")).toMatch(/inside a request or webhook handler,? pass `maxRetries: 0`/i)
    })
  }

  it("the SDK's README states the Node range it runs on, and what was tested", () => {
    const readme = readFileSync("sdk/README.md", "utf8")
    expect(readme).toMatch(/Node 18 or later \(CI runs the client on Node 18, 20 and 24; the Effect client on 20 and 24\)/)
    expect(JSON.parse(readFileSync("sdk/package.json", "utf8")).engines.node).toBe(">=18")
  })
})
