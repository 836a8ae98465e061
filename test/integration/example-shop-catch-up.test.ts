import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { CATALOG } from "../../examples/shop/Catalog.ts"
import { orderStore } from "../../examples/shop/Orders.ts"
import { orderPage } from "../../examples/shop/Pages.ts"
import { catchUp } from "../../examples/shop/Shop.ts"
import { createCheckoutClient } from "../../sdk/src/index.ts"
import { SuiteMerchant, suiteOptions, testApp, TestServer } from "../support/TestApp.ts"

// The example shop's catch-up at start, against the service: what a shop does after downtime,
// when the webhooks sent meanwhile are gone and a key cannot list invoices.
it.layer(SuiteMerchant.layer().pipe(Layer.provideMerge(testApp())), suiteOptions)((it) => {
  describe("the example shop's catch-up", () => {
    it.effect("reads the invoice of every unpaid order by id and applies its status; an unreadable one stays for the next start", () =>
      Effect.gen(function*() {
        const merchant = yield* SuiteMerchant
        const { baseUrl } = yield* TestServer
        const orders = orderStore()
        const orderWithInvoice = Effect.gen(function*() {
          const order = orders.create(CATALOG[0])
          const invoice = (yield* merchant.api("/api/checkout/invoices", { body: { amountUsd: order.amountUsd, merchantReference: order.id } })).body
          orders.attachInvoice(order.id, invoice)
          return { order, invoice }
        })
        // Paid by hand and voided while the shop was down: no webhook ever reached it.
        const paid = yield* orderWithInvoice
        expect((yield* merchant.api(`/api/checkout/invoices/${paid.invoice.id}/record-payment`, { body: { note: "bank transfer" } })).status).toBe(200)
        const voided = yield* orderWithInvoice
        expect((yield* merchant.api(`/api/checkout/invoices/${voided.invoice.id}/void`, { body: {} })).status).toBe(200)
        const waiting = yield* orderWithInvoice
        const lost = orders.create(CATALOG[0])
        orders.attachInvoice(lost.id, { id: crypto.randomUUID(), paymentUrl: "http://127.0.0.1:1/pay/lost" })

        const lines: Array<string> = []
        yield* Effect.promise(() => catchUp(createCheckoutClient({ baseUrl, apiKey: merchant.apiKey }), orders, (line) => lines.push(line)))

        expect(orders.get(paid.order.id)).toMatchObject({ status: "paid", paidThrough: { event: "catch_up", delivery: null, invoiceStatus: "paid_out_of_band" } })
        expect(orderPage(orders.get(paid.order.id)!)).toContain("after the shop's catch-up at start")
        expect(orders.get(voided.order.id)).toMatchObject({ status: "cancelled" })
        expect(orders.get(waiting.order.id)).toMatchObject({ status: "awaiting_payment" })
        expect(orders.get(lost.id)).toMatchObject({ status: "awaiting_payment", webhooks: [] })
        expect(lines).toEqual([
          `catch-up: order ${paid.order.id} is paid (invoice paid_out_of_band)`,
          `catch-up: order ${voided.order.id} is cancelled (invoice voided)`,
          `catch-up: order ${waiting.order.id} is awaiting_payment (invoice awaiting_payment)`,
          expect.stringMatching(new RegExp(`^catch-up: cannot fetch invoice ${orders.get(lost.id)!.invoiceId} of order ${lost.id} \\(`))
        ])
        // A paid order is not read again at the next start.
        expect(orders.unsettled().map((order) => order.id)).not.toContain(paid.order.id)
      }))
  })
})
