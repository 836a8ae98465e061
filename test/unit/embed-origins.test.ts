import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { CHECKOUT_SCRIPT_BUDGET_COMPRESSED_BYTES, loadCheckoutScript } from "../../src/pay/CheckoutScript.ts"
import { usualConfirmationMinutes } from "../../src/pay/ConfirmationTime.ts"
import { embedOriginsProblem, frameAncestors } from "../../src/payments/EmbedOrigins.ts"

describe("embed origins", () => {
  it("takes https origins, and loopback http origins (127.0.0.0/8, localhost, [::1], any port) outside production", () => {
    const loopback = ["http://127.0.0.1:5173", "http://127.8.9.10", "http://localhost:3000", "http://[::1]:8080"]
    expect(embedOriginsProblem(["https://shop.example", "https://shop.example:8443", ...loopback], false)).toBeUndefined()
    for (const origin of loopback) expect(embedOriginsProblem([origin], true)).toMatch(/^embedOrigins\[0\] must be https:\/\/ in production/)
  })

  it("refuses what is not an origin as browsers write it, http on a public host, duplicates, and more than 10", () => {
    expect(embedOriginsProblem(["https://shop.example/"], false)).toMatch(/^embedOrigins\[0\] must be an origin exactly/)
    expect(embedOriginsProblem(["https://shop.example/checkout"], false)).toMatch(/no path/)
    expect(embedOriginsProblem(["https://Shop.example"], false)).toMatch(/https:\/\/shop\.example/)
    expect(embedOriginsProblem(["shop.example"], false)).toMatch(/is not an origin|must be/)
    expect(embedOriginsProblem(["http://shop.example"], false)).toMatch(/must be an https:\/\/ origin/)
    expect(embedOriginsProblem(["http://10.0.0.1"], false)).toMatch(/must be an https:\/\/ origin/)
    expect(embedOriginsProblem(["https://*.shop.example"], false)).toBeDefined()
    expect(embedOriginsProblem(["https://a.example", "https://a.example"], false)).toBe("embedOrigins[1] is listed twice")
    const eleven = Array.from({ length: 11 }, (_, index) => `https://shop${index}.example`)
    expect(embedOriginsProblem(eleven, false)).toBe("embedOrigins must have at most 10 origins")
    expect(embedOriginsProblem(eleven.slice(0, 10), false)).toBeUndefined()
  })

  it("frame-ancestors lists exactly the origins, 'none' without any", () => {
    expect(frameAncestors([])).toBe("'none'")
    expect(frameAncestors(["https://a.example", "http://127.0.0.1:5173"])).toBe("https://a.example http://127.0.0.1:5173")
  })
})

describe("checkout.js", () => {
  it("stays within 6 KB gzip, and the docs pin its current version and Subresource Integrity hash", async () => {
    const script = await loadCheckoutScript()
    expect(script.gzipBytes).toBeLessThanOrEqual(CHECKOUT_SCRIPT_BUDGET_COMPRESSED_BYTES)
    const docs = readFileSync(new URL("../../docs/payment-page.md", import.meta.url), "utf8")
    expect(docs).toContain(`/checkout.js?v=${script.version}`)
    expect(docs).toContain(script.integrity)
  })
})

describe("the wait told to a payer whose payment was detected", () => {
  it("is the required confirmations at the network's usual block time, in whole minutes, at least one", () => {
    expect(usualConfirmationMinutes("bitcoin", 2)).toBe(20)
    expect(usualConfirmationMinutes("ethereum", 12)).toBe(3)
    expect(usualConfirmationMinutes("solana", 32)).toBe(1)
  })
})
