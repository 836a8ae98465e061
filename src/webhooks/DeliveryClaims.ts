import { Clock, Effect, Fiber, FiberSet, Queue, Semaphore } from "effect"
import { WEBHOOK_TIMEOUT_MS } from "./WebhookConnector.ts"
import type { WebhookDeliveryRepo } from "./WebhookDeliveryRepo.ts"
import type { recording } from "./DeliveryRecording.ts"
import { type Claimed, destinationOf, type sending } from "./DeliverySending.ts"
import type { MerchantId } from "../domain/Ids.ts"

/** A lease longer than an attempt's 10-second budget: a claim whose process died is retried after it. */
export const LEASE_MS = 3 * WEBHOOK_TIMEOUT_MS

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

const now = Clock.currentTimeMillis

/**
 * Claim: what the room in flight allows, each attempt started in the background (sent, then
 * recorded); the room per process and per merchant is counted here.
 */
export const claiming = (repo: WebhookDeliveryRepo["Service"], send: ReturnType<typeof sending>, recordClaimed: ReturnType<typeof recording>["recordClaimed"]) =>
  Effect.gen(function*() {
    const { gather, refundOf, sendTo } = send
    const attempts = yield* FiberSet.make<void>()
    const inFlight = new Map<string, number>()
    let attemptsInFlight = 0
    let endedSinceClaim = 0
    const freed = yield* Queue.sliding<void>(1)
    const claimLock = yield* Semaphore.make(1)

    const release = (merchantId: MerchantId) =>
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
