import { Clock, Effect } from "effect"
import type { DeliveryId } from "../domain/Ids.ts"
import type { SendResult } from "./Sender.ts"
import type { Claimed } from "./DeliverySending.ts"
import type { AttemptRecord, WebhookDeliveryRepo } from "./WebhookDeliveryRepo.ts"
import { RETRY_DELAYS_MS } from "./WebhookEvents.ts"

/** The delivery state after an automatic attempt (pure): delivered, retried on the fixed schedule, or failed for good. */
export const afterAttempt = (attemptCount: number, ok: boolean, now: number) =>
  ok
    ? { status: "delivered" as const, nextAttemptAt: null }
    : attemptCount > RETRY_DELAYS_MS.length
    ? { status: "failed" as const, nextAttemptAt: null }
    : { status: "pending" as const, nextAttemptAt: new Date(now + RETRY_DELAYS_MS[attemptCount - 1]) }

const attemptOf = (result: SendResult & { readonly url: string }, at: number, manual: boolean): AttemptRecord => ({
  url: result.url,
  attemptedAt: new Date(at),
  statusCode: result.statusCode,
  durationMs: result.durationMs,
  error: result.error,
  responseExcerpt: result.responseExcerpt,
  manual
})

const now = Clock.currentTimeMillis

/** Record: an attempt and the delivery's next state. */
export const recording = (repo: WebhookDeliveryRepo["Service"]) => {
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
