/**
 * The example shop: `npm run example:shop` (see README.md for the settings and how to get them).
 *
 *   CHECKOUT_URL      the checkout service (default http://127.0.0.1:3000)
 *   CHECKOUT_API_KEY  a checkout API key of your merchant account: a test key (svc_test_...)
 *   CHECKOUT_WEBHOOK_SECRET  the webhook signing secret of the same account
 *   SHOP_PORT         where the shop listens on 127.0.0.1 (default 4100; 0 picks a free port)
 *   SHOP_URL          where buyers reach the shop (default http://127.0.0.1:<port>)
 *   SHOP_ORDERS_FILE  keep the orders in this JSON file (default: in memory only)
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { createCheckoutClient } from "../../sdk/src/index.ts"
import { orderStore } from "./Orders.ts"
import { catchUp, shopHandler } from "./Shop.ts"

const required = (name: string) => {
  const value = process.env[name]
  if (value === undefined || value === "") {
    console.error(`${name} is required (see examples/shop/README.md)`)
    process.exit(1)
  }
  return value
}

const checkoutUrl = process.env.CHECKOUT_URL ?? "http://127.0.0.1:3000"
const apiKey = required("CHECKOUT_API_KEY")
const webhookSecret = required("CHECKOUT_WEBHOOK_SECRET")
const port = Number(process.env.SHOP_PORT ?? 4100)

/** The SDK's fetch, printing each call to the service: what the shop asks and when (it never polls). */
const loggedFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, init)
  console.log(`checkout ${init?.method ?? "GET"} ${new URL(input instanceof Request ? input.url : String(input)).pathname} -> ${response.status}`)
  return response
}

const server = createServer()
server.listen(port, "127.0.0.1", () => {
  const publicUrl = (process.env.SHOP_URL ?? `http://127.0.0.1:${(server.address() as AddressInfo).port}`).replace(/\/+$/, "")
  const checkout = createCheckoutClient({ baseUrl: checkoutUrl, apiKey, fetch: loggedFetch })
  const orders = orderStore(process.env.SHOP_ORDERS_FILE)
  const handle = shopHandler({ checkout, webhookSecret, publicUrl, orders })
  server.on("request", (request, response) => void handle(request, response))
  console.log(`example shop on ${publicUrl} (checkout service ${checkoutUrl}, ${apiKey.startsWith("svc_test_") ? "test mode" : "LIVE key: real money"})`)
  console.log(`webhook URL: ${publicUrl}/webhooks/checkout`)
  // Whatever changed while the shop was down (orders kept in SHOP_ORDERS_FILE).
  void catchUp(checkout, orders)
})

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    server.close(() => process.exit(0))
    server.closeAllConnections()
  })
}
