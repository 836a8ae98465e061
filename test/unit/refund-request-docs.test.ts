import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { refundMessage } from "../../src/refunds/RefundMessage.ts"
import { PENDING_REQUESTS_PER_OPTION } from "../../src/refunds/RequestDecision.ts"

const read = (path: string) => readFileSync(join(import.meta.dirname, "..", "..", path), "utf8")

/** Issue #52: the merchant guide says how to handle unverified refund requests; refunds.md shows the text a payer signs as the code builds it. */
describe("the refund request documentation", () => {
  it("tells the merchant how to handle unverified requests", () => {
    const guide = read("docs/merchant-guide.md")
    const section = guide.slice(guide.indexOf("**Unverified requests.**"))
    expect(guide).toContain("**Unverified requests.**")
    for (const words of ["Differs from the address that paid", "Signed by the paying address", "Choose this request", "channel you already trust",
      "Bitcoin requests are never signed"])
    {
      expect(section).toContain(words)
    }
    expect(section).toContain(`at most ${PENDING_REQUESTS_PER_OPTION}`)
  })

  it("shows the signed message line by line as RefundMessage.ts writes it", () => {
    const doc = read("docs/refunds.md")
    const example = doc.slice(doc.indexOf("```text\n") + 8, doc.indexOf("```", doc.indexOf("```text\n") + 8)).trimEnd().split("\n")
    const built = refundMessage({ domain: "checkout.example.com", invoiceId: "6f1c…", paymentOptionId: "0b2e…", refundAddress: "0x5aAe…" }).split("\n")
    expect(example).toEqual(built)
  })
})
