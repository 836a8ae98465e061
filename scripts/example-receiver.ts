/**
 * An example merchant webhook receiver, in the safe order the merchant guide gives: verify the
 * signature over the raw body, fetch the invoice, act on its status (idempotently), and only then
 * answer 2xx. When the fetch fails it answers 503, so the service delivers the event again.
 *
 *   CHECKOUT_WEBHOOK_SECRET=whsec_... CHECKOUT_API_KEY=svc_live_... [RECEIVER_PORT=4000] npm run example-receiver
 *   (then set the webhook URL to http://127.0.0.1:4000/webhooks/checkout in development)
 */
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { verifyWebhookSignature } from "../src/webhooks/Signature.ts"

const secret = process.env.CHECKOUT_WEBHOOK_SECRET ?? ""
const apiKey = process.env.CHECKOUT_API_KEY ?? ""
const checkoutUrl = (process.env.CHECKOUT_URL ?? "http://127.0.0.1:3000").replace(/\/+$/, "")
// Its own variable: PORT is the service's, and the two often run from one shell.
const port = Number(process.env.RECEIVER_PORT ?? 4000)
if (secret === "" || apiKey === "") {
  console.error("set CHECKOUT_WEBHOOK_SECRET and CHECKOUT_API_KEY")
  process.exit(2)
}

/** Delivery is at-least-once: remember what was fulfilled (a database in a real shop). */
const fulfilled = new Set<string>()

const fetchInvoice = async (invoiceId: string) => {
  const response = await fetch(`${checkoutUrl}/api/checkout/invoices/${invoiceId}`, { headers: { "x-api-key": apiKey } })
  if (!response.ok) throw new Error(`detail answered ${response.status}`)
  return (await response.json()) as { id: string; status: string; merchantReference: string | null }
}

/** What the invoice's status means for the order, whatever the event said. */
const apply = (invoice: { id: string; status: string; merchantReference: string | null }) => {
  if (invoice.status === "confirmed" || invoice.status === "paid_out_of_band") {
    if (fulfilled.has(invoice.id)) {
      console.log(`already fulfilled ${invoice.id}`)
    } else {
      fulfilled.add(invoice.id)
      console.log(`fulfil order ${invoice.merchantReference ?? invoice.id}`)
    }
  } else if (invoice.status === "expired" || invoice.status === "voided") {
    // Not final: accepting a late payment can still turn an expired invoice confirmed.
    console.log(`stop accepting payment for ${invoice.id} (${invoice.status})`)
  } else {
    console.log(`keep ${invoice.id} pending (${invoice.status})`)
  }
}

const receive = async (raw: Buffer, headers: NodeJS.Dict<string | Array<string>>, response: ServerResponse) => {
  if (!verifyWebhookSignature(raw, headers["x-checkout-signature"] as string | undefined, secret)) {
    response.writeHead(400).end("bad signature")
    return
  }
  const { event, invoice } = JSON.parse(raw.toString("utf8")) as { event: string; invoice: { id: string } | null }
  // The dashboard's "Send a test event" carries no invoice: there is nothing to fetch or fulfil.
  if (invoice === null) {
    console.log(`${event}: signature verified (delivery ${headers["x-checkout-delivery"]})`)
    response.writeHead(204).end()
    return
  }
  console.log(`${event} for ${invoice.id} (delivery ${headers["x-checkout-delivery"]})`)
  try {
    apply(await fetchInvoice(invoice.id))
  } catch (error) {
    // Not acknowledged: the service tries again after 1, 5 and 15 minutes (then the dashboard redelivers).
    console.error(`could not check ${invoice.id}, answering 503 so that it is delivered again: ${(error as Error).cause ?? error}`)
    response.writeHead(503).end()
    return
  }
  response.writeHead(204).end()
}

const server = createServer((request, response) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => void receive(Buffer.concat(chunks), request.headers, response))
})
server.listen(port, "127.0.0.1", () => console.log(`example receiver on http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/checkout`))
