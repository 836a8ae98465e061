/**
 * An example merchant webhook receiver: verifies the signature over the raw body, then fetches
 * the invoice with the detail endpoint before fulfilling, as the spec recommends.
 *
 *   WEBHOOK_SECRET=whsec_... CHECKOUT_API_KEY=svc_live_... [RECEIVER_PORT=4000] npm run example-receiver
 *   (then set the webhook URL to http://127.0.0.1:4000/webhooks/checkout in development)
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { verifyWebhookSignature } from "../src/webhooks/Signature.ts"

const secret = process.env.WEBHOOK_SECRET ?? ""
const apiKey = process.env.CHECKOUT_API_KEY ?? ""
const checkoutUrl = (process.env.CHECKOUT_URL ?? "http://127.0.0.1:3000").replace(/\/+$/, "")
// Its own variable: PORT is the service's, and the two often run from one shell.
const port = Number(process.env.RECEIVER_PORT ?? 4000)
if (secret === "" || apiKey === "") {
  console.error("set WEBHOOK_SECRET and CHECKOUT_API_KEY")
  process.exit(2)
}

/** Delivery is at-least-once: remember what was fulfilled (a database in a real shop). */
const fulfilled = new Set<string>()

const fulfil = async (invoiceId: string) => {
  const response = await fetch(`${checkoutUrl}/api/checkout/invoices/${invoiceId}`, { headers: { "x-api-key": apiKey } })
  if (!response.ok) throw new Error(`detail answered ${response.status}`)
  const invoice = (await response.json()) as { id: string; status: string; merchantReference: string | null }
  if (invoice.status === "confirmed" || invoice.status === "paid_out_of_band") {
    if (fulfilled.has(invoice.id)) {
      console.log(`already fulfilled ${invoice.id}`)
    } else {
      fulfilled.add(invoice.id)
      console.log(`fulfil order ${invoice.merchantReference ?? invoice.id}`)
    }
  } else if (invoice.status === "expired" || invoice.status === "voided") {
    console.log(`stop accepting payment for ${invoice.id} (${invoice.status})`)
  } else {
    console.log(`keep ${invoice.id} pending (${invoice.status})`)
  }
}

const server = createServer((request, response) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => {
    const raw = Buffer.concat(chunks)
    if (!verifyWebhookSignature(raw, request.headers["x-checkout-signature"] as string | undefined, secret)) {
      response.writeHead(401).end("bad signature")
      return
    }
    const { event, invoice } = JSON.parse(raw.toString("utf8")) as { event: string; invoice: { id: string } | null }
    // The dashboard's "Send a test event" carries no invoice: there is nothing to fetch or fulfil.
    if (invoice === null) {
      console.log(`${event}: signature verified (delivery ${request.headers["x-checkout-delivery"]})`)
      response.writeHead(204).end()
      return
    }
    console.log(`${event} for ${invoice.id} (delivery ${request.headers["x-checkout-delivery"]})`)
    // Answer fast; the fetch of the invoice decides what to do, whatever the event said.
    response.writeHead(204).end()
    fulfil(invoice.id).catch((error: unknown) => console.error(`could not check ${invoice.id}:`, error))
  })
})
server.listen(port, "127.0.0.1", () => console.log(`example receiver on http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/checkout`))
