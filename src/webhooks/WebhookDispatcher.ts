import { PgClient } from "@effect/sql-pg"
import { Clock, Context, Duration, Effect, Layer, Option, Queue, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../config/AppConfig.ts"
import { MerchantId } from "../domain/Ids.ts"
import { InvoiceChanges } from "../invoices/InvoiceChanges.ts"
import { InvoiceRepo } from "../invoices/InvoiceRepo.ts"
import { RefundsRepo } from "../refunds/RefundsRepo.ts"
import { type DeliveryFilters, DeliveryNotFound, type DeliveryPage, type DeliveryView, findDelivery, type InvalidCursor, listDeliveries } from "./DeliveryLog.ts"
import { eventDeliveryId } from "./EventIdentity.ts"
import type { SendResult } from "./Sender.ts"
import { WebhookAgents } from "./WebhookAgents.ts"
import { claiming } from "./DeliveryClaims.ts"
import { WebhookConnector } from "./WebhookConnector.ts"
import { WebhookDeliveryRepo } from "./WebhookDeliveryRepo.ts"
import { recording } from "./DeliveryRecording.ts"
import { WebhookResolver } from "./WebhookResolver.ts"
import { notSent, sending } from "./DeliverySending.ts"
import { destinationKey, WebhookSettings } from "./WebhookSettings.ts"
import { WebhookSettingsRepo } from "./WebhookSettingsRepo.ts"

export { DeliveryNotFound, InvalidCursor } from "./DeliveryLog.ts"

/** The channel the outbox trigger notifies (migration 0012). */
export const OUTBOX_CHANNEL = "checkout_outbox"

const FAN_OUT_BATCH = 200

/** Repeats a batch step until a batch comes back short: a backlog is worked off in one run. */
const drain = (step: Effect.Effect<number>, batchSize: number): Effect.Effect<void> => Effect.flatMap(step, (taken) => (taken < batchSize ? Effect.void : drain(step, batchSize)))

type DeliveryRepo = WebhookDeliveryRepo["Service"]
const now = Clock.currentTimeMillis

/**
 * Fan-out: turns undispatched outbox events into one delivery each for the URL of the merchant's
 * settings of the invoice's mode (unless the event is switched off there): a test event never goes
 * to the live URL, nor a live one to the test URL.
 */
const fanOutStep = (repo: DeliveryRepo, settingsRepo: WebhookSettingsRepo["Service"]) =>
  Effect.gen(function*() {
    const at = new Date(yield* now)
    const events = yield* repo.lockUndispatched(FAN_OUT_BATCH)
    if (events.length === 0) return 0
    const configured = yield* settingsRepo.findTargets([...new Set(events.map((event) => event.merchantId))])
    const targets = new Map(
      configured.flatMap((row) => row.url === null ? [] : [[destinationKey(row.merchantId, row.livemode), { url: row.url, enabledEvents: row.enabledEvents }] as const])
    )
    const deliveries = events.flatMap((event) => {
      const target = targets.get(destinationKey(event.merchantId, event.livemode))
      if (target === undefined || !target.enabledEvents.includes(event.event)) return []
      return [{
        id: eventDeliveryId(event),
        outboxId: event.id.toString(),
        merchantId: event.merchantId,
        invoiceId: event.invoiceId,
        refundId: event.refundId,
        event: event.event,
        livemode: event.livemode,
        url: target.url,
        status: "pending" as const,
        nextAttemptAt: at,
        createdAt: at,
        updatedAt: at
      }]
    })
    if (deliveries.length > 0) yield* repo.insertDeliveries(deliveries as [typeof deliveries[0], ...Array<typeof deliveries[0]>])
    yield* repo.markDispatched(events.map((event) => event.id), at)
    return events.length
  }).pipe(repo.withTransaction, Effect.withSpan("WebhookDispatcher.fanOut"))

/**
 * Outbox to deliveries to attempts. Events committed with a lifecycle change become one delivery
 * each (for the URL configured when the event is picked up, unless the event is switched off),
 * then are sent on the spec's retry schedule. Work is claimed with FOR UPDATE SKIP LOCKED and a
 * lease, so several instances share it and a crash at any point leads to another attempt, never
 * to a lost event.
 */
export class WebhookDispatcher extends Context.Service<WebhookDispatcher, {
  /** Turns undispatched outbox events into deliveries; returns how many events it took. */
  readonly fanOut: Effect.Effect<number>
  /** Claims and attempts the deliveries that are due, until none is left; returns how many it claimed. */
  readonly sendDue: Effect.Effect<number>
  /** Fans out and sends until nothing more is due at this moment. */
  readonly runOnce: Effect.Effect<void>
  /**
   * Fans out, then claims what is due as far as the room in flight allows and starts those attempts
   * in the background, without waiting for them (the background dispatcher's step).
   */
  readonly startOnce: Effect.Effect<void>
  /** Waits until attempts started in the background have ended and left room worth a claim. */
  readonly attemptsEnded: Effect.Effect<void>
  /** A manual, recorded attempt outside the schedule. */
  readonly redeliver: (merchantId: MerchantId, deliveryId: string) => Effect.Effect<DeliveryView, DeliveryNotFound>
  readonly list: (merchantId: MerchantId, filters: DeliveryFilters) => Effect.Effect<DeliveryPage, InvalidCursor>
  /**
   * A signed `webhook_test` event (`invoice: null`) sent now to the configured URL, through the same
   * destination checks; nothing is recorded. For the dashboard's "send a test event".
   */
  readonly sendTest: (merchantId: MerchantId, livemode?: boolean) => Effect.Effect<SendResult>
}>()("Webhooks/WebhookDispatcher") {
  static readonly layerWithoutDependencies = Layer.effect(
    WebhookDispatcher,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* WebhookDeliveryRepo
      const settings = yield* WebhookSettings
      const { resolve } = yield* WebhookResolver
      const { connect } = yield* WebhookConnector
      const { webhookAllowLoopback } = yield* AppConfig
      const agents = yield* Effect.acquireRelease(
        Effect.sync(() => new WebhookAgents(connect)),
        (pool) => Effect.promise(() => pool.close())
      )
      const fanOut = fanOutStep(repo, yield* WebhookSettingsRepo)
      const send = sending({ settings, invoices: yield* InvoiceRepo, refunds: yield* RefundsRepo, resolve, connect, agents, allowLoopback: webhookAllowLoopback })
      const { record, recordClaimed } = recording(repo)
      const { attemptsEnded, sendDue, startDue } = yield* claiming(repo, send, recordClaimed)

      const redeliver = Effect.fn("WebhookDispatcher.redeliver")(function*(merchantId: MerchantId, deliveryId: string) {
        const delivery = yield* findDelivery(merchantId, deliveryId)
        // A client that hangs up does not cancel the attempt: it is always recorded.
        yield* Effect.uninterruptible(Effect.gen(function*() {
          const result = yield* send.send({ ...delivery, merchantId: MerchantId.make(merchantId) })
          yield* record(delivery.id, result, true)
        }))
        return yield* findDelivery(merchantId, deliveryId)
      }, Effect.provideService(SqlClient.SqlClient, sql))

      const sendTest = Effect.fn("WebhookDispatcher.sendTest")(function*(merchantId: MerchantId, livemode: boolean = true) {
        const { url, secret } = yield* settings.destination(merchantId, livemode)
        if (url === null) return notSent("no webhook URL is configured")
        if (secret === null) return notSent("no signing secret is configured")
        return yield* send.post(url, secret, "webhook_test", crypto.randomUUID(), JSON.stringify({ event: "webhook_test", livemode, invoice: null }))
      }, Effect.catchTag("SecretUnreadable", (error) => Effect.succeed(notSent(error.reason))))

      return {
        fanOut,
        sendDue,
        sendTest,
        runOnce: Effect.andThen(drain(fanOut, FAN_OUT_BATCH), sendDue).pipe(Effect.withSpan("WebhookDispatcher.runOnce")),
        startOnce: Effect.andThen(drain(fanOut, FAN_OUT_BATCH), startDue).pipe(Effect.asVoid, Effect.withSpan("WebhookDispatcher.startOnce")),
        attemptsEnded,
        redeliver,
        list: (merchantId, filters) => listDeliveries(merchantId, filters).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.withSpan("WebhookDispatcher.list"))
      }
    })
  ).pipe(Layer.provide([WebhookDeliveryRepo.layer, WebhookSettingsRepo.layer]))

  /** With the repositories, the settings and the system's network (a test swaps the network on `layerWithoutDependencies`). */
  static readonly layer = WebhookDispatcher.layerWithoutDependencies.pipe(
    Layer.provide([InvoiceChanges.publishingRepo, RefundsRepo.layer, WebhookSettings.layer, WebhookResolver.system, WebhookConnector.system])
  )

  /**
   * The background dispatcher: fans out and starts attempts whenever events commit (woken by the
   * outbox trigger's NOTIFY on a PostgreSQL server), when attempts have ended and left room, and at
   * least every CHECKOUT_WEBHOOK_POLL_MS, which also brings due retries and is all there is on the
   * embedded database.
   */
  static readonly worker = Layer.effectDiscard(Effect.gen(function*() {
    const dispatcher = yield* WebhookDispatcher
    const config = yield* AppConfig
    const wake = yield* Queue.sliding<void>(1)
    const pg = config.databaseUrl === undefined ? Option.none() : yield* Effect.serviceOption(PgClient.PgClient)
    if (Option.isSome(pg)) {
      const listen = Effect.scoped(Effect.gen(function*() {
        const notifications = yield* pg.value.listen(OUTBOX_CHANNEL)
        while (true) {
          yield* Queue.take(notifications)
          yield* Queue.offer(wake, undefined)
        }
      }))
      // A lost connection ends the listener; it listens again, and the poll covers the gap.
      yield* listen.pipe(
        Effect.catchCause((cause) => Effect.logWarning("Outbox listener stopped; listening again", cause)),
        Effect.repeat(Schedule.spaced(Duration.seconds(1))),
        Effect.forkScoped
      )
    }
    // Attempts run in the background: a receiver that hangs never holds up the next claim.
    yield* dispatcher.startOnce.pipe(
      Effect.catchCause((cause) => Effect.logError("Webhook dispatch failed", cause)),
      Effect.andThen(Effect.raceFirst(Queue.take(wake), dispatcher.attemptsEnded).pipe(Effect.timeoutOption(Duration.millis(config.webhookPollIntervalMs)))),
      Effect.forever,
      Effect.forkScoped
    )
  })).pipe(Layer.provide(WebhookDispatcher.layer))
}
