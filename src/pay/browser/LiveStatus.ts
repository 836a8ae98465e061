/// <reference lib="dom" />
import type { PublicInvoiceStatusView } from "../../domain/InvoiceResponses.ts"

/** The public status as the stream and the status route send it. */
export type PublicStatus = typeof PublicInvoiceStatusView.Encoded

/** Statuses after which the server ends the stream (src/invoices/StatusStream.ts FINAL_STREAM_STATUSES). */
const FINAL = new Set(["confirmed", "paid_out_of_band"])

/**
 * Follows the invoice's public status over Server-Sent Events: `onStatus` gets the current status
 * at once and each change after it. EventSource reconnects by itself after a dropped connection
 * (sending Last-Event-ID, so only a change is sent again). When the stream cannot be had (no
 * EventSource, or the server refuses it: 429 over the per-address cap, 503, a proxy that answers
 * something else), `fallBack` is called once, to poll instead. Returns whether the stream was started.
 */
export const followStatus = (invoiceId: string, onStatus: (status: PublicStatus) => void, fallBack: () => void): boolean => {
  if (typeof EventSource === "undefined") {
    fallBack()
    return false
  }
  const source = new EventSource(`/api/checkout/pay/${encodeURIComponent(invoiceId)}/events`)
  let done = false
  source.addEventListener("status", (event) => {
    const status = JSON.parse((event as MessageEvent<string>).data) as PublicStatus
    // The server ends the stream after a final status; closing here keeps EventSource from reconnecting.
    if (FINAL.has(status.status)) {
      done = true
      source.close()
    }
    onStatus(status)
  })
  source.addEventListener("error", () => {
    if (done || source.readyState !== EventSource.CLOSED) return
    done = true
    fallBack()
  })
  return true
}
