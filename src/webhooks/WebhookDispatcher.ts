import { PgClient } from "@effect/sql-pg"
import { Clock, Context, Duration, Effect, Fiber, FiberSet, Layer, Option, Queue, Result, Schedule, Semaphore } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../config/AppConfig.ts"
import { type DeliveryId, MerchantId } from "../domain/Ids.ts"
import type { InvoiceRecord } from "../domain/Invoice.ts"
import { InvoiceRepo } from "../invoices/InvoiceRepo.ts"
import type { RefundRecord } from "../refunds/Refund.ts"
import { RefundsRepo } from "../refunds/RefundsRepo.ts"
import { type DeliveryFilters, DeliveryNotFound, type DeliveryPage, type DeliveryView, findDelivery, type InvalidCursor, listDeliveries } from "./DeliveryLog.ts"
import { type SendResult, sendWebhook } from "./Sender.ts"
import type { Delivery } from "./Delivery.ts"
import { signWebhook } from "./Signature.ts"
import { WebhookAgents } from "./WebhookAgents.ts"
import { webhookInvoiceJson, webhookRefundJson } from "./WebhookPayloads.ts"
import { RETRY_DELAYS_MS } from "./WebhookEvents.ts"
import { WEBHOOK_TIMEOUT_MS, WebhookConnector, WebhookResolver } from "./WebhookNetwork.ts"
import { type AttemptRecord, WebhookDeliveryRepo } from "./WebhookDeliveryRepo.ts"
import { destinationKey, type SecretUnreadable, type WebhookDestination, WebhookSettings } from "./WebhookSettings.ts"
import { WebhookSettingsRepo } from "./WebhookSettingsRepo.ts"
import { eventDeliveryId } from "./EventIdentity.ts"
import { InvoiceChanges } from "../invoices/InvoiceChanges.ts"

export { DeliveryNotFound, InvalidCursor } from "./DeliveryLog.ts"
export { WebhookConnector, WebhookResolver } from "./WebhookNetwork.ts"

export const WEBHOOK_USER_AGENT = "checkout-webhooks/1.0"

/** A lease longer than an attempt's 10-second budget: a claim whose process died is retried after it. */
export const LEASE_MS = 3 * WEBHOOK_TIMEOUT_MS

/** The channel the outbox trigger notifies (migration 0012). */
export const OUTBOX_CHANNEL = "checkout_outbox"

const FAN_OUT_BATCH = 200
/**
 * Attempts run in the background, at most MAX_IN_FLIGHT at once in a process and at most
 * MERCHANT_IN_FLIGHT of one merchant: a merchant whose receiver hangs holds that many attempts for
 * their 10-second time-out, never the claiming, and never the others' room.
 */
export const MAX_IN_FLIGHT = 64
export const MERCHANT_IN_FLIGHT = 16
/** Most deliveries one claim takes; a claim is made again once this many attempts have ended. */
const CLAIM_BATCH = 16
/** Due deliveries one claim looks at (locked and skipped by others meanwhile) to fill a batch within the per-merchant room. */
const CLAIM_WINDOW = 4 * CLAIM_BATCH

/** The delivery state after an automatic attempt (pure): delivered, retried on the fixed schedule, or failed for good. */
export const afterAttempt = (attemptCount: number, ok: boolean, now: number) =>
  ok
    ? { status: "delivered" as const, nextAttemptAt: null }
    : attemptCount > RETRY_DELAYS_MS.length
    ? { status: "failed" as const, nextAttemptAt: null }
    : { status: "pending" as const, nextAttemptAt: new Date(now + RETRY_DELAYS_MS[attemptCount - 1]) }

/** What an attempt needs to know of its delivery. */
type Outgoing = Pick<Delivery, "id" | "merchantId" | "invoiceId" | "refundId" | "event" | "livemode" | "url">
/** A delivery claimed for an automatic attempt, with its attempt count at the claim. */
type Claimed = Outgoing & Pick<Delivery, "attemptCount">

/** Repeats a batch step until a batch comes back short: a backlog is worked off in one run. */
const drain = (step: Effect.Effect<number>, batchSize: number): Effect.Effect<void> => Effect.flatMap(step, (taken) => (taken < batchSize ? Effect.void : drain(step, batchSize)))

const notSent = (error: string): SendResult => ({ ok: false, statusCode: null, durationMs: 0, error, responseExcerpt: null })

const attemptOf = (result: SendResult & { readonly url: string }, at: number, manual: boolean): AttemptRecord => ({
  url: result.url,
  attemptedAt: new Date(at),
  statusCode: result.statusCode,
  durationMs: result.durationMs,
  error: result.error,
  responseExcerpt: result.responseExcerpt,
  manual
})

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

/** What sending needs: the destinations, what the events report, and the network. */
interface SendDeps {
  readonly settings: WebhookSettings["Service"]
  readonly invoices: InvoiceRepo["Service"]
  readonly refunds: RefundsRepo["Service"]
  readonly resolve: WebhookResolver["Service"]["resolve"]
  readonly connect: WebhookConnector["Service"]["connect"]
  readonly agents: WebhookAgents
  readonly allowLoopback: boolean
}

/** Send: what a batch of attempts sends (read just before), and the signed POST within the attempt's budget. */
const sending = ({ agents, allowLoopback, connect, invoices, refunds, resolve, settings }: SendDeps) => {
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
const destinationOf = (destinations: ReadonlyMap<string, Result.Result<WebhookDestination, SecretUnreadable>>, delivery: Outgoing) =>
  destinations.get(destinationKey(delivery.merchantId, delivery.livemode))!

/** Record: an attempt and the delivery's next state. */
const recording = (repo: DeliveryRepo) => {
  /**
   * The attempt and the delivery's new state, in one transaction under the delivery's row lock;
   * the delivery shows the URL last attempted.
   */
  const record = (deliveryId: DeliveryId, result: SendResult & { readonly url: string }, manual: boolean) =>
    Effect.gen(function*() {
      const at = yield* now
      yield* repo.insertAttempt(deliveryId, attemptOf(result, at, manual))
      const current = yield* repo.lock(deliveryId)
      const attemptCount = current.attemptCount + (manual ? 0 : 1)
      // A manual attempt only ever marks a delivery delivered; it leaves the schedule alone.
      const next = current.status === "delivered" || (manual && result.ok)
        ? { status: "delivered", nextAttemptAt: null }
        : manual
        ? { status: current.status, nextAttemptAt: current.nextAttemptAt }
        : afterAttempt(attemptCount, result.ok, at)
      yield* repo.saveState(deliveryId, {
        attemptCount,
        status: next.status,
        nextAttemptAt: next.nextAttemptAt,
        url: result.url,
        lastStatusCode: result.statusCode,
        updatedAt: new Date(at)
      }, manual)
    }).pipe(repo.withTransaction)

  /**
   * An automatic attempt recorded in one statement, outside a transaction: the attempt and the
   * delivery's next state (afterAttempt, from the count at the claim), only while the delivery
   * is still pending with that count and its row is not locked. Otherwise (delivered or being
   * recorded by hand meanwhile, or a claim taken over after the lease) it is recorded by
   * `record`, under the row lock, which decides from the current row. The guard never waits for a lock: this statement may share a
   * pipelined connection with others, which a wait would hold up.
   */
  const recordClaimed = (delivery: Claimed, result: SendResult & { readonly url: string }) =>
    Effect.gen(function*() {
      const at = yield* now
      const next = afterAttempt(delivery.attemptCount + 1, result.ok, at)
      const written = yield* repo.recordIfStillClaimed(delivery.id, delivery.attemptCount, attemptOf(result, at, false), {
        attemptCount: delivery.attemptCount + 1,
        status: next.status,
        nextAttemptAt: next.nextAttemptAt,
        url: result.url,
        lastStatusCode: result.statusCode,
        updatedAt: new Date(at)
      })
      if (!written) yield* record(delivery.id, result, false)
    })
  return { record, recordClaimed }
}

/**
 * Claim: what the room in flight allows, each attempt started in the background (sent, then
 * recorded); the room per process and per merchant is counted here.
 */
const claiming = (repo: DeliveryRepo, send: ReturnType<typeof sending>, recordClaimed: ReturnType<typeof recording>["recordClaimed"]) =>
  Effect.gen(function*() {
    const { gather, refundOf, sendTo } = send
    const attempts = yield* FiberSet.make<void>()
    const inFlight = new Map<string, number>()
    let attemptsInFlight = 0
    let endedSinceClaim = 0
    const freed = yield* Queue.sliding<void>(1)
    const claimLock = yield* Semaphore.make(1)

    const release = (merchantId: string) =>
      Effect.suspend(() => {
        const left = (inFlight.get(merchantId) ?? 1) - 1
        if (left === 0) inFlight.delete(merchantId)
        else inFlight.set(merchantId, left)
        attemptsInFlight--
        endedSinceClaim++
        // Claiming again is worth a statement once a batch's worth has ended, or all have.
        return endedSinceClaim >= CLAIM_BATCH || attemptsInFlight === 0 ? Queue.offer(freed, undefined) : Effect.void
      })

    // An interrupted attempt (the process stopping) aborts its request and records nothing: the
    // lease runs out and the delivery is attempted again. One delivery's trouble must not cut the
    // others short; its lease brings it back.
    const attempt = (delivery: Claimed, { destinations, invoices, refunds }: Effect.Success<ReturnType<typeof gather>>) =>
      sendTo(delivery, destinationOf(destinations, delivery), invoices.get(delivery.invoiceId), refundOf(refunds, delivery)).pipe(
        Effect.flatMap((result) => recordClaimed(delivery, result)),
        Effect.catchCause((cause) => Effect.logError("Webhook attempt failed", cause)),
        Effect.ensuring(release(delivery.merchantId))
      )

    /**
     * Claims what the room in flight allows, repeatedly while claims come back full, and starts
     * each attempt in the background; returns the attempts started.
     */
    const startDue = claimLock.withPermits(1)(Effect.gen(function*() {
      const started: Array<Fiber.Fiber<void>> = []
      while (attemptsInFlight < MAX_IN_FLIGHT) {
        const limit = Math.min(CLAIM_BATCH, MAX_IN_FLIGHT - attemptsInFlight)
        const busy = [...inFlight]
        const at = new Date(yield* now)
        const batch = yield* repo.claimDue({
          at,
          leaseUntil: new Date(at.getTime() + LEASE_MS),
          limit,
          window: CLAIM_WINDOW,
          merchantRoom: MERCHANT_IN_FLIGHT,
          full: busy.filter(([, count]) => count >= MERCHANT_IN_FLIGHT).map(([merchantId]) => merchantId),
          busy: busy.map(([merchantId]) => merchantId),
          room: busy.map(([, count]) => Math.max(0, MERCHANT_IN_FLIGHT - count))
        })
        endedSinceClaim = 0
        for (const delivery of batch) {
          inFlight.set(delivery.merchantId, (inFlight.get(delivery.merchantId) ?? 0) + 1)
          attemptsInFlight++
        }
        const gathered = yield* gather(batch).pipe(Effect.onError(() => Effect.forEach(batch, (delivery) => release(delivery.merchantId))))
        for (const delivery of batch) started.push(yield* FiberSet.run(attempts, attempt(delivery, gathered)))
        // A short claim means nothing more is due, unless it filled a merchant's room: others may wait behind it.
        if (batch.length < limit && !batch.some((delivery) => inFlight.get(delivery.merchantId)! >= MERCHANT_IN_FLIGHT)) break
      }
      return started
    }))

    /** Claims and attempts until nothing more is due and every attempt it started has ended. */
    const sendDue = Effect.gen(function*() {
      let claimed = 0
      let running: Array<Fiber.Fiber<void>> = []
      while (true) {
        const started = yield* startDue
        claimed += started.length
        running = [...running, ...started].filter((fiber) => fiber.pollUnsafe() === undefined)
        if (running.length === 0) return claimed
        yield* Effect.raceAll(running.map(Fiber.await))
      }
    }).pipe(Effect.withSpan("WebhookDispatcher.sendDue"))
    return { startDue, sendDue, attemptsEnded: Queue.take(freed) }
  })

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
  readonly redeliver: (merchantId: string, deliveryId: string) => Effect.Effect<DeliveryView, DeliveryNotFound>
  readonly list: (merchantId: string, filters: DeliveryFilters) => Effect.Effect<DeliveryPage, InvalidCursor>
  /**
   * A signed `webhook_test` event (`invoice: null`) sent now to the configured URL, through the same
   * destination checks; nothing is recorded. For the dashboard's "send a test event".
   */
  readonly sendTest: (merchantId: string, livemode?: boolean) => Effect.Effect<SendResult>
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

      const redeliver = Effect.fn("WebhookDispatcher.redeliver")(function*(merchantId: string, deliveryId: string) {
        const delivery = yield* findDelivery(merchantId, deliveryId)
        // A client that hangs up does not cancel the attempt: it is always recorded.
        yield* Effect.uninterruptible(Effect.gen(function*() {
          const result = yield* send.send({ ...delivery, merchantId: MerchantId.make(merchantId) })
          yield* record(delivery.id, result, true)
        }))
        return yield* findDelivery(merchantId, deliveryId)
      }, Effect.provideService(SqlClient.SqlClient, sql))

      const sendTest = Effect.fn("WebhookDispatcher.sendTest")(function*(merchantId: string, livemode: boolean = true) {
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
