import type { IncomingMessage, ServerResponse } from "node:http"
import { CheckoutError, type CheckoutClient, parseWebhookEvent, type WebhookEvent, WebhookSignatureError } from "../../sdk/src/index.ts"
import { CATALOG, productById } from "./Catalog.ts"
import { CATCH_UP_EVENT, type OrderStore } from "./Orders.ts"
import { messagePage, orderPage, productPage } from "./Pages.ts"

export interface ShopOptions {
  readonly checkout: CheckoutClient
  readonly webhookSecret: string
  /** Where buyers reach the shop (the payment page's "return to shop" link points here). */
  readonly publicUrl: string
  readonly orders: OrderStore
  /** One line per webhook received (default console.log). */
  readonly log?: (line: string) => void
}

const MAX_BODY_BYTES = 1024 * 1024

const readBody = async (request: IncomingMessage): Promise<Buffer> => {
  const chunks: Array<Buffer> = []
  let size = 0
  for await (const chunk of request) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY_BYTES) throw new Error("body too large")
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks)
}

const send = (response: ServerResponse, status: number, contentType: string, body: string) => {
  response.writeHead(status, { "content-type": contentType, "cache-control": "no-store" }).end(body)
}
const html = (response: ServerResponse, status: number, body: string) => send(response, status, "text/html; charset=utf-8", body)
const json = (response: ServerResponse, status: number, body: unknown) => send(response, status, "application/json", JSON.stringify(body))

/** The invoice a webhook is about (the dashboard's `webhook_test` has none). */
const invoiceIdOf = (event: WebhookEvent): string | undefined => event.invoice?.id

/**
 * After downtime the webhooks sent meanwhile may be gone for good, and a key cannot list invoices:
 * the shop reads by id the invoice of every order not yet paid and applies its status as a webhook
 * would. An order whose invoice cannot be read stays as it is, for the next start.
 */
export const catchUp = async (checkout: CheckoutClient, orders: OrderStore, log: (line: string) => void = console.log) => {
  for (const order of orders.unsettled()) {
    try {
      const invoice = await checkout.invoices.retrieve(order.invoiceId)
      const after = orders.recordWebhook(order.id, { event: CATCH_UP_EVENT, delivery: null, invoiceStatus: invoice.status, receivedAt: new Date().toISOString() })
      log(`catch-up: order ${order.id} is ${after.status} (invoice ${invoice.status})`)
    } catch (error) {
      log(`catch-up: cannot fetch invoice ${order.invoiceId} of order ${order.id} (${error instanceof CheckoutError ? error.error : String(error)})`)
    }
  }
}

/** The shop's routes on plain node:http: products, checkout, orders and the webhook endpoint. */
export const shopHandler = (options: ShopOptions) => {
  const { checkout, orders } = options
  const log = options.log ?? console.log

  /** POST /checkout: an order, its invoice (the order id as idempotency key: a retried click never makes two), then to the order's page and its pay button. */
  const startCheckout = async (request: IncomingMessage, response: ServerResponse) => {
    const form = new URLSearchParams((await readBody(request)).toString("utf8"))
    const product = productById(form.get("product") ?? "")
    if (product === undefined) return html(response, 400, messagePage("Unknown product", "Choose a product from the list."))
    const order = orders.create(product)
    try {
      const invoice = await checkout.invoices.create({
        amountUsd: product.priceUsd,
        productName: product.name,
        merchantReference: order.id,
        redirectUrl: `${options.publicUrl}/orders/${order.id}`
      }, { idempotencyKey: order.id })
      orders.attachInvoice(order.id, invoice)
      // To the order's page, whose button opens the payment page over it (checkout.js).
      response.writeHead(303, { location: `/orders/${order.id}` }).end()
    } catch (error) {
      if (!(error instanceof CheckoutError)) throw error
      html(response, 502, messagePage("Checkout is unavailable", `The payment service answered: ${error.error}. Please try again.`))
    }
  }

  /**
   * POST /webhooks/checkout: verify the signature over the raw body, then fetch the invoice (the
   * payload may be stale: deliveries are at-least-once and unordered) and let its status decide.
   */
  const receiveWebhook = async (request: IncomingMessage, response: ServerResponse) => {
    const raw = await readBody(request)
    let event: WebhookEvent
    try {
      event = parseWebhookEvent(raw, request.headers["x-checkout-signature"] as string | undefined, options.webhookSecret)
    } catch (error) {
      if (error instanceof WebhookSignatureError) {
        log("webhook refused: its signature does not verify")
        return json(response, 400, { error: "signature does not verify" })
      }
      return json(response, 400, { error: "body is not JSON" })
    }
    const invoiceId = invoiceIdOf(event)
    const delivery = request.headers["x-checkout-delivery"]
    log(`webhook ${event.event} verified (delivery ${delivery ?? "none"}, invoice ${invoiceId ?? "none"})`)
    const order = invoiceId === undefined ? undefined : orders.byInvoice(invoiceId)
    // Not about one of our orders (the dashboard's test event, another shop's invoice): acknowledged, nothing to do.
    if (invoiceId === undefined || order === undefined) return json(response, 200, { received: true })
    try {
      const invoice = await checkout.invoices.retrieve(invoiceId)
      orders.recordWebhook(order.id, {
        event: event.event,
        delivery: typeof delivery === "string" ? delivery : null,
        invoiceStatus: invoice.status,
        receivedAt: new Date().toISOString()
      })
    } catch (error) {
      // Not acknowledged (an error answer, or the service out of reach): the service delivers it
      // again after 1, 5 and 15 minutes, and the dashboard can redeliver it after that.
      const reason = error instanceof CheckoutError ? error.error : String((error as Error).cause ?? error)
      log(`webhook not acknowledged: cannot fetch invoice ${invoiceId} (${reason})`)
      return json(response, 503, { error: `cannot fetch the invoice: ${reason}` })
    }
    json(response, 200, { received: true })
  }

  const showOrder = (response: ServerResponse, id: string, asJson: boolean) => {
    const order = orders.get(id)
    if (order === undefined) return asJson ? json(response, 404, { error: "Order not found" }) : html(response, 404, messagePage("Order not found", id))
    return asJson ? json(response, 200, order) : html(response, 200, orderPage(order))
  }

  return async (request: IncomingMessage, response: ServerResponse) => {
    const { pathname } = new URL(request.url ?? "/", "http://shop.invalid")
    const order = /^\/orders\/([\w-]{1,100}?)(\.json)?$/.exec(pathname)
    try {
      if (request.method === "GET" && pathname === "/") return html(response, 200, productPage(CATALOG))
      if (request.method === "POST" && pathname === "/checkout") return await startCheckout(request, response)
      if (request.method === "POST" && pathname === "/webhooks/checkout") return await receiveWebhook(request, response)
      if (request.method === "GET" && order !== null) return showOrder(response, order[1], order[2] !== undefined)
      html(response, 404, messagePage("Not found", pathname))
    } catch (error) {
      console.error(error)
      if (!response.headersSent) html(response, 500, messagePage("Something went wrong", "Please try again."))
    }
  }
}
