import { Data, Effect, Option } from "effect"
import { decodeKeysetCursor, encodeKeysetCursor } from "../db/KeysetCursor.ts"
import type { DeliveryView } from "./Delivery.ts"
import { DeliveryLogRepo } from "./DeliveryLogRepo.ts"
import type { MerchantId } from "../domain/Ids.ts"

export type { DeliveryView } from "./Delivery.ts"

export class DeliveryNotFound extends Data.TaggedError("DeliveryNotFound")<{}> {}
export class InvalidCursor extends Data.TaggedError("InvalidCursor")<{}> {}

export interface DeliveryFilters {
  /** The mode of the deliveries listed: live unless false (test deliveries never show among live ones). */
  readonly livemode?: boolean | undefined
  readonly q?: string | undefined
  readonly status?: string | undefined
  readonly event?: string | undefined
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
}

export interface DeliveryPage {
  readonly deliveries: ReadonlyArray<DeliveryView>
  readonly nextCursor: string | null
}

const DEFAULT_PAGE = 50
const MAX_PAGE = 200

const decodeCursor = (cursor: string) => {
  const position = decodeKeysetCursor(cursor)
  return position === undefined ? Effect.fail(new InvalidCursor()) : Effect.succeed(position)
}

/** One delivery of a merchant with its attempts, as the dashboard shows it. */
export const findDelivery = Effect.fn("DeliveryLog.find")(function*(merchantId: MerchantId, deliveryId: string) {
  const repo = yield* DeliveryLogRepo.make
  const found = yield* repo.find(merchantId, deliveryId)
  if (Option.isNone(found)) return yield* new DeliveryNotFound()
  return found.value
})

/**
 * A page of a merchant's deliveries, newest first. `q` matches a delivery id, invoice id or event
 * exactly, a part of the URL, or the HTTP status of the last or any earlier attempt.
 */
export const listDeliveries = Effect.fn("DeliveryLog.list")(function*(merchantId: MerchantId, filters: DeliveryFilters) {
  const repo = yield* DeliveryLogRepo.make
  const limit = Math.min(Math.max(filters.limit ?? DEFAULT_PAGE, 1), MAX_PAGE)
  const after = filters.cursor === undefined ? undefined : yield* decodeCursor(filters.cursor)
  const rows = yield* repo.page(merchantId, { livemode: filters.livemode ?? true, q: filters.q, status: filters.status, event: filters.event, after }, limit + 1)
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  return {
    deliveries: page,
    nextCursor: rows.length > limit && last !== undefined ? encodeKeysetCursor(last.createdAt.toISOString(), last.id) : null
  } satisfies DeliveryPage
})
