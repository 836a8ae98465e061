import { describe, expect, it } from "vitest"
import { eventDeliveryId } from "../../src/webhooks/EventIdentity.ts"

const event = { merchantId: "m-1", invoiceId: "i-1", refundId: null, event: "invoice_confirmed", occurrence: 1 }

describe("a webhook event's delivery id (X-Checkout-Delivery)", () => {
  it("is a version-8 UUID that the same event always gets, as after a restore writes it again", () => {
    expect(eventDeliveryId(event)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(eventDeliveryId({ ...event })).toBe(eventDeliveryId(event))
  })

  it("differs for another occurrence, event name, invoice, refund or merchant", () => {
    const others = [{ occurrence: 2 }, { event: "invoice_expired" }, { invoiceId: "i-2" }, { refundId: "r-1" }, { merchantId: "m-2" }]
    const ids = new Set([event, ...others.map((other) => ({ ...event, ...other }))].map(eventDeliveryId))
    expect(ids.size).toBe(6)
  })
})
