import { Clock, Duration, Effect, Option, Result } from "effect"
import type { InvoiceRecord } from "../domain/Invoice.ts"
import type { InvoiceRepo } from "../invoices/InvoiceRepo.ts"
import type { RefundRecord } from "../refunds/Refund.ts"
import { webhookInvoiceJson, webhookRefundJson } from "./WebhookPayloads.ts"
import type { RefundsRepo } from "../refunds/RefundsRepo.ts"
import type { Delivery } from "./Delivery.ts"
import { type SendResult, sendWebhook } from "./Sender.ts"
import { signWebhook } from "./Signature.ts"
import type { WebhookAgents } from "./WebhookAgents.ts"
import { WEBHOOK_TIMEOUT_MS, type WebhookConnector } from "./WebhookConnector.ts"
import type { WebhookResolver } from "./WebhookResolver.ts"
import { destinationKey, type SecretUnreadable, type WebhookDestination, type WebhookSettings } from "./WebhookSettings.ts"

export const WEBHOOK_USER_AGENT = "checkout-webhooks/1.0"

/** What an attempt needs to know of its delivery. */
export type Outgoing = Pick<Delivery, "id" | "merchantId" | "invoiceId" | "refundId" | "event" | "livemode" | "url">
/** A delivery claimed for an automatic attempt, with its attempt count at the claim. */
export type Claimed = Outgoing & Pick<Delivery, "attemptCount">

export const notSent = (error: string): SendResult => ({ ok: false, statusCode: null, durationMs: 0, error, responseExcerpt: null })

const now = Clock.currentTimeMillis

/** What sending needs: the destinations, what the events report, and the network. */
export interface SendDeps {
  readonly settings: WebhookSettings["Service"]
  readonly invoices: InvoiceRepo["Service"]
  readonly refunds: RefundsRepo["Service"]
  readonly resolve: WebhookResolver["Service"]["resolve"]
  readonly connect: WebhookConnector["Service"]["connect"]
  readonly agents: WebhookAgents
  readonly allowLoopback: boolean
}

/** Send: what a batch of attempts sends (read just before), and the signed POST within the attempt's budget. */
export const sending = ({ agents, allowLoopback, connect, invoices, refunds, resolve, settings }: SendDeps) => {
  /** The refunds the deliveries' refund events report, by id (one primary-key read each). */
  const refundsOf = (deliveries: ReadonlyArray<Outgoing>) =>
    Effect.forEach(
      [...new Set(deliveries.flatMap((delivery) => delivery.refundId === null ? [] : [delivery.refundId]))],
      (id) => refunds.find(id),
      { concurrency: "unbounded" }
    ).pipe(Effect.map((found) => new Map(found.flatMap((refund) => Option.isSome(refund) ? [[refund.value.id as string, refund.value] as const] : []))))
  const refundOf = (found: ReadonlyMap<string, RefundRecord>, delivery: Outgoing) => delivery.refundId === null ? undefined : found.get(delivery.refundId)

  /**
   * One signed POST within the attempt's time budget. The budget is an Effect time-out on the
   * service's clock (tests step it with TestClock instead of waiting); running out interrupts
   * the request, which aborts it through the promise's signal. The sender's own deadline is
   * only a backstop.
   */
  const post = (url: string, secret: string, event: string, deliveryId: string, body: string) =>
    Effect.gen(function*() {
      const headers = {
        "content-type": "application/json",
        "user-agent": WEBHOOK_USER_AGENT,
        "x-checkout-signature": signWebhook(body, secret),
        "x-checkout-event": event,
        "x-checkout-delivery": deliveryId
      }
      const started = yield* now
      return yield* Effect.promise((signal) => sendWebhook({ url, body, headers, resolve, connect, agents, allowLoopback, signal, timeoutMs: 2 * WEBHOOK_TIMEOUT_MS })).pipe(
        Effect.timeoutOrElse({
          duration: Duration.millis(WEBHOOK_TIMEOUT_MS),
          orElse: () =>
            Effect.map(now, (at): SendResult => ({
              ok: false,
              statusCode: null,
              durationMs: at - started,
              error: `timed out after ${WEBHOOK_TIMEOUT_MS} ms`,
              responseExcerpt: null
            }))
        })
      )
    })

  /**
   * What a batch of attempts sends, read just before sending: each merchant's destination as
   * configured now (a retry follows a changed URL), in one statement for the batch, each
   * invoice's latest state, and the latest state of the refunds that refund events report.
   */
  const gather = (deliveries: ReadonlyArray<Outgoing>) =>
    Effect.all({
      destinations: settings.destinations([...new Set(deliveries.map((delivery) => delivery.merchantId))]),
      invoices: invoices.findInvoices([...new Set(deliveries.map((delivery) => delivery.invoiceId))]),
      refunds: refundsOf(deliveries)
    }, { concurrency: 3 })

  /**
   * Sends the signed request to the destination, or says why it was not sent; never fails (the
   * attempt records where it went). An interruption aborts the request through the promise's
   * signal.
   */
  const sendTo = (
    delivery: Outgoing,
    destination: Result.Result<WebhookDestination, SecretUnreadable>,
    invoice: InvoiceRecord | undefined,
    refund: RefundRecord | undefined
  ) =>
    Effect.gen(function*() {
      if (Result.isFailure(destination)) return { ...notSent(destination.failure.reason), url: delivery.url }
      const { url, secret } = destination.success
      if (url === null) return { ...notSent("no webhook URL is configured"), url: delivery.url }
      if (secret === null) return { ...notSent("no signing secret is configured"), url }
      const invoiceView = invoice === undefined ? null : webhookInvoiceJson(invoice)
      const body = JSON.stringify(
        delivery.refundId === null
          ? { event: delivery.event, livemode: delivery.livemode, invoice: invoiceView }
          : { event: delivery.event, livemode: delivery.livemode, invoice: invoiceView, refund: refund === undefined ? null : webhookRefundJson(refund) }
      )
      const result = yield* post(url, secret, delivery.event, delivery.id, body)
      return { ...result, url }
    })

  const send = (delivery: Outgoing) =>
    Effect.flatMap(gather([delivery]), ({ destinations, invoices, refunds }) =>
      sendTo(delivery, destinationOf(destinations, delivery), invoices.get(delivery.invoiceId), refundOf(refunds, delivery)))
  return { post, gather, sendTo, send, refundOf }
}

/** The destination of the delivery's mode among those `gather` read (every merchant's, both modes). */
export const destinationOf = (destinations: ReadonlyMap<string, Result.Result<WebhookDestination, SecretUnreadable>>, delivery: Outgoing) =>
  destinations.get(destinationKey(delivery.merchantId, delivery.livemode))!
