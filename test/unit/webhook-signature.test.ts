import { createHmac } from "node:crypto"
import { describe, expect, it } from "vitest"
import { signWebhook, verifyWebhookSignature } from "../../src/webhooks/Signature.ts"

const body = "{\"event\":\"invoice_created\",\"invoice\":{\"id\":\"5f0c8a52-3c1e-4e8a-9d2b-2a0f3c4d5e6f\"}}"
const secret = "whsec_test"

describe("webhook signatures", () => {
  it("are the hex HMAC-SHA256 of the raw body under the secret (as node:crypto computes it)", () => {
    expect(signWebhook(body, secret)).toBe(createHmac("sha256", secret).update(body).digest("hex"))
    expect(signWebhook(new TextEncoder().encode(body), secret)).toBe(signWebhook(body, secret))
    // RFC 4231 test case 2
    expect(signWebhook("what do ya want for nothing?", "Jefe")).toBe("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
  })

  it("verify in lowercase, uppercase or mixed case", () => {
    const signature = signWebhook(body, secret)
    const mixed = [...signature].map((char, index) => (index % 2 === 0 ? char.toUpperCase() : char)).join("")
    for (const header of [signature, signature.toUpperCase(), mixed]) expect(verifyWebhookSignature(body, header, secret)).toBe(true)
    expect(verifyWebhookSignature(Buffer.from(body), signature, secret)).toBe(true)
  })

  it("reject anything but 64 hex characters", () => {
    const signature = signWebhook(body, secret)
    for (const bad of [
      undefined,
      null,
      "",
      signature.slice(1),
      `${signature}0`,
      `sha256=${signature}`,
      signature.replace(/.$/, "g"),
      ` ${signature}`,
      `${signature}\n`,
      signature.slice(0, 32),
      "0".repeat(64),
      "g".repeat(64),
      "0x" + signature.slice(2)
    ]) {
      expect(verifyWebhookSignature(body, bad, secret), String(bad)).toBe(false)
    }
  })

  it("fail under another secret", () => {
    expect(verifyWebhookSignature(body, signWebhook(body, secret), "whsec_other")).toBe(false)
  })
})
