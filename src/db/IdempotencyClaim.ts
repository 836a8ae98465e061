import { Context } from "effect"

/**
 * The `Idempotency-Key` claim a request runs under, when it has one. A repository write that
 * commits the request's effect marks the claim with the resource it touched in the same statement,
 * so that a retry after a crash replays that resource instead of doing the work twice.
 */
export class IdempotencyClaim extends Context.Service<IdempotencyClaim, {
  readonly merchantId: string
  readonly scope: string
  readonly key: string
}>()("Db/IdempotencyClaim") {}
