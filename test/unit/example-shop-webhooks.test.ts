import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CATALOG } from "../../examples/shop/Catalog.ts"
import { orderStore } from "../../examples/shop/Orders.ts"
import { shopHandler } from "../../examples/shop/Shop.ts"
import { createCheckoutClient } from "../../sdk/src/index.ts"
import { signWebhook } from "../../src/webhooks/Signature.ts"

// The example shop's webhook endpoint when it cannot read the invoice: it must not acknowledge the
// event (the service then delivers it again), and it must not change the order.
const secret = "whsec_shop_unit"
const orders = orderStore()
const lines: Array<string> = []
let shop: Server
let shopUrl: string

const listen = (server: Server) => new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)))

beforeAll(async () => {
  // Where the checkout service would be: a port taken from the OS and let go, so nothing answers there.
  const gone = createServer()
  const gonePort = await listen(gone)
  await new Promise((resolve) => gone.close(resolve))
  const handle = shopHandler({
    checkout: createCheckoutClient({ baseUrl: `http://127.0.0.1:${gonePort}`, apiKey: "svc_live_unit" }),
    webhookSecret: secret,
    publicUrl: "http://127.0.0.1:1",
    orders,
    log: (line) => lines.push(line)
  })
  shop = createServer((request, response) => void handle(request, response))
  shopUrl = `http://127.0.0.1:${await listen(shop)}`
})

afterAll(() => new Promise((resolve) => shop.close(resolve)))

describe("the example shop's webhook endpoint", () => {
  it("answers 503 and leaves the order alone when the service is out of reach, so that the event is delivered again", async () => {
    const order = orders.create(CATALOG[0])
    const invoiceId = crypto.randomUUID()
    orders.attachInvoice(order.id, { id: invoiceId, paymentUrl: `http://127.0.0.1:1/pay/${invoiceId}` })
    const body = JSON.stringify({ event: "invoice_confirmed", invoice: { id: invoiceId, status: "confirmed" } })
    const answer = await fetch(`${shopUrl}/webhooks/checkout`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-checkout-signature": signWebhook(body, secret) },
      body
    })
    expect(answer.status).toBe(503)
    expect(orders.get(order.id)).toMatchObject({ status: "awaiting_payment", paidThrough: null, webhooks: [] })
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^webhook not acknowledged: cannot fetch invoice ${invoiceId} `)))
  })
})
