import { createHmac } from "node:crypto"
import { describe, expect, expectTypeOf, it } from "vitest"
import { parseWebhookEvent, verifyWebhookSignature, type WebhookEvent, WebhookSignatureError } from "../../sdk/src/index.ts"
import { signWebhook } from "../../src/webhooks/Signature.ts"

// Signature vectors for the SDK's verification, signed the way the service's dispatcher signs.
const secret = "whsec_test_8f3a"
const body = JSON.stringify({ event: "invoice_confirmed", invoice: { id: "5f0c6a2e-8d8f-4a53-9a57-3d1c2b7f9e10", status: "confirmed" } })
const signature = signWebhook(body, secret)

describe("verifyWebhookSignature", () => {
  it("accepts the service's signature, in lowercase and in uppercase, over a string or the raw bytes", () => {
    expect(signature).toMatch(/^[0-9a-f]{64}$/)
    expect(signature).toBe(createHmac("sha256", secret).update(body).digest("hex"))
    expect(verifyWebhookSignature(body, signature, secret)).toBe(true)
    expect(verifyWebhookSignature(body, signature.toUpperCase(), secret)).toBe(true)
    expect(verifyWebhookSignature(new TextEncoder().encode(body), signature, secret)).toBe(true)
    expect(verifyWebhookSignature(Buffer.from(body), signature, secret)).toBe(true)
  })

  it("refuses anything but 64 hex characters", () => {
    for (const header of [signature.slice(0, 63), `${signature}0`, `sha256=${signature}`, ` ${signature}`, `${signature.slice(0, 63)}g`, "", null, undefined]) {
      expect(verifyWebhookSignature(body, header, secret)).toBe(false)
    }
  })

  it("refuses the wrong secret and a tampered body", () => {
    expect(verifyWebhookSignature(body, signature, "whsec_other")).toBe(false)
    expect(verifyWebhookSignature(body.replace("confirmed", "confirmeD"), signature, secret)).toBe(false)
    expect(verifyWebhookSignature(`${body} `, signature, secret)).toBe(false)
  })
})

describe("parseWebhookEvent", () => {
  it("returns the event of a verified body", () => {
    const event = parseWebhookEvent(body, signature, secret)
    expect(event.event).toBe("invoice_confirmed")
    if (event.event === "invoice_confirmed") expect(event.invoice.id).toBe("5f0c6a2e-8d8f-4a53-9a57-3d1c2b7f9e10")
  })

  it("exposes livemode, typed boolean on every event: false for a test invoice's event (issue #55)", () => {
    // Every event's type carries it: a member without livemode makes this a type error.
    expectTypeOf<WebhookEvent["livemode"]>().toEqualTypeOf<boolean>()
    const testSecret = "whsec_test_mode_b71c"
    for (const livemode of [false, true]) {
      const raw = JSON.stringify({ event: "invoice_confirmed", livemode, invoice: { id: "5f0c6a2e-8d8f-4a53-9a57-3d1c2b7f9e10", status: "confirmed" } })
      const event: WebhookEvent = parseWebhookEvent(raw, signWebhook(raw, testSecret), testSecret)
      expect(event.livemode).toBe(livemode)
    }
  })

  it("throws WebhookSignatureError on a bad signature, before reading the body", () => {
    expect(() => parseWebhookEvent("not json", signature, secret)).toThrow(WebhookSignatureError)
    expect(() => parseWebhookEvent(body, "0".repeat(64), secret)).toThrow(WebhookSignatureError)
  })
})
