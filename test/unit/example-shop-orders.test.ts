import { describe, expect, it } from "vitest"
import { CATALOG } from "../../examples/shop/Catalog.ts"
import { orderStatusAfter, orderStore, type WebhookReceipt } from "../../examples/shop/Orders.ts"

const receipt = (event: string, invoiceStatus: string): WebhookReceipt => ({ event, delivery: crypto.randomUUID(), invoiceStatus, receivedAt: new Date().toISOString() })

describe("the example shop's orders", () => {
  it("fulfils on confirmed or paid_out_of_band, cancels on expired or voided, keeps the rest pending", () => {
    for (const status of ["confirmed", "paid_out_of_band"]) expect(orderStatusAfter("awaiting_payment", status)).toBe("paid")
    for (const status of ["expired", "voided"]) expect(orderStatusAfter("awaiting_payment", status)).toBe("cancelled")
    for (const status of ["awaiting_payment", "partially_paid", "payment_detected"]) expect(orderStatusAfter("awaiting_payment", status)).toBe("awaiting_payment")
  })

  it("stays paid whatever arrives later, and a late confirmed payment pays a cancelled order", () => {
    for (const status of ["awaiting_payment", "payment_detected", "expired", "voided"]) expect(orderStatusAfter("paid", status)).toBe("paid")
    expect(orderStatusAfter("cancelled", "confirmed")).toBe("paid")
  })

  it("records the webhook that made the order paid, and every webhook after it", () => {
    const orders = orderStore()
    const order = orders.create(CATALOG[0])
    orders.attachInvoice(order.id, { id: "invoice-1", paymentUrl: "http://127.0.0.1/pay/invoice-1" })
    const confirmed = receipt("invoice_confirmed", "confirmed")
    orders.recordWebhook(order.id, receipt("invoice_created", "awaiting_payment"))
    orders.recordWebhook(order.id, confirmed)
    // A duplicate of an older event, delivered late, finds the invoice confirmed too: nothing changes.
    const after = orders.recordWebhook(order.id, receipt("invoice_created", "confirmed"))
    expect(after).toMatchObject({ status: "paid", paidAt: confirmed.receivedAt, paidThrough: confirmed })
    expect(after.webhooks.map((entry) => entry.event)).toEqual(["invoice_created", "invoice_confirmed", "invoice_created"])
    expect(orders.byInvoice("invoice-1")?.id).toBe(order.id)
  })
})
