import { Context, Duration, Effect, Layer, Option, Schedule, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { PaymentWorker } from "./PaymentWorker.ts"

/** Wallets stop scanning after 20 unused addresses (BIP44's gap limit): never derive further ahead. */
export const GAP_LIMIT = 20

/** A pooled address handed out, with how many free ones its key has left. */
const TakenAddress = Schema.Struct({ address: Schema.String, derivationIndex: Schema.Int, remaining: Schema.Int })
const ByKey = Schema.Struct({ xpub: Schema.String })

/**
 * Pre-derived BIP84 receive addresses per account key. Creating an invoice takes the lowest
 * free one (SKIP LOCKED, so concurrent creates never share one); a refill derives up to the gap
 * limit of free addresses ahead, reserving indexes from the same per-key counter as every other
 * derivation, so an index is never handed out twice.
 */
export class BitcoinAddressPool extends Context.Service<BitcoinAddressPool, {
  /** Takes a free address (and says how many are left), or undefined while the pool of this key is being prepared. */
  readonly take: (xpub: string) => Effect.Effect<{ readonly address: string; readonly derivationIndex: number; readonly remaining: number } | undefined>
  /** Derives free addresses until `GAP_LIMIT` are available for the key. */
  readonly refill: (xpub: string, target?: number) => Effect.Effect<number>
  /** Refills every bitcoin key of every merchant (the background worker). */
  readonly refillAll: Effect.Effect<void>
}>()("Payments/BitcoinAddressPool") {
  static readonly layer = Layer.effect(
    BitcoinAddressPool,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const worker = yield* PaymentWorker

      // One refill per key at a time: in this process (a set of keys under way) and across
      // instances (a transaction-scoped advisory lock; a refill that cannot take it is skipped).
      const refilling = new Set<string>()
      const refill = (xpub: string, target: number = GAP_LIMIT) =>
        Effect.suspend(() => {
          if (refilling.has(xpub)) return Effect.succeed(0)
          refilling.add(xpub)
          return refillLocked(xpub, target).pipe(Effect.ensuring(Effect.sync(() => refilling.delete(xpub))))
        }).pipe(Effect.withSpan("BitcoinAddressPool.refill"))

      const tryLock = SqlSchema.findOne({
        Request: ByKey,
        Result: Schema.Struct({ locked: Schema.Boolean }),
        execute: ({ xpub }) => sql`SELECT pg_try_advisory_xact_lock(hashtext(${`bitcoin-pool:${xpub}`})) AS locked`
      })
      const countFree = SqlSchema.findOne({
        Request: ByKey,
        Result: Schema.Struct({ count: Schema.Int }),
        execute: ({ xpub }) => sql`SELECT count(*)::int AS count FROM bitcoin_address_pool WHERE xpub = ${xpub} AND assigned_at IS NULL`
      })
      const advanceCounter = SqlSchema.findOne({
        Request: Schema.Struct({ xpub: Schema.String, count: Schema.Int }),
        Result: Schema.Struct({ nextIndex: Schema.Int }),
        execute: ({ xpub, count }) =>
          sql`INSERT INTO derivation_counters (xpub, next_index) VALUES (${xpub}, ${count})
            ON CONFLICT (xpub) DO UPDATE SET next_index = derivation_counters.next_index + ${count}
            RETURNING next_index::int AS next_index`
      })
      // The count runs on the statement's snapshot, before the update: it includes the taken address.
      const takeFree = SqlSchema.findOneOption({
        Request: ByKey,
        Result: TakenAddress,
        execute: ({ xpub }) =>
          sql`WITH taken AS (
              UPDATE bitcoin_address_pool SET assigned_at = now()
              WHERE (xpub, derivation_index) = (
                SELECT xpub, derivation_index FROM bitcoin_address_pool
                WHERE xpub = ${xpub} AND assigned_at IS NULL
                ORDER BY derivation_index LIMIT 1 FOR UPDATE SKIP LOCKED)
              RETURNING address, derivation_index)
            SELECT address, derivation_index::int AS derivation_index,
              (SELECT count(*)::int FROM bitcoin_address_pool WHERE xpub = ${xpub} AND assigned_at IS NULL) - 1 AS remaining
            FROM taken`
      })
      const findKeys = SqlSchema.findAll({
        Request: Schema.Void,
        Result: ByKey,
        execute: () => sql`SELECT DISTINCT xpub FROM payment_methods WHERE network = 'bitcoin' AND enabled AND xpub IS NOT NULL`
      })

      const refillLocked = (xpub: string, target: number) =>
        Effect.gen(function*() {
          if (!(yield* tryLock({ xpub })).locked) return 0
          const missing = target - (yield* countFree({ xpub })).count
          if (missing <= 0) return 0
          const first = (yield* advanceCounter({ xpub, count: missing })).nextIndex - missing
          const derived = yield* worker.bitcoinAddresses(xpub, first, missing)
          const addresses = derived.map((address, offset) => ({ xpub, derivationIndex: first + offset, address }))
          yield* sql`INSERT INTO bitcoin_address_pool ${sql.insert(addresses as [typeof addresses[0], ...Array<typeof addresses[0]>])}`
          return missing
        }).pipe(sql.withTransaction, Effect.orDie)

      const take = Effect.fnUntraced(function*(xpub: string) {
        return Option.getOrUndefined(yield* takeFree({ xpub }))
      }, Effect.orDie)

      const refillAll = Effect.gen(function*() {
        const keys = yield* findKeys(undefined).pipe(Effect.orDie)
        yield* Effect.forEach(keys, ({ xpub }) => refill(xpub), { discard: true })
      }).pipe(Effect.withSpan("BitcoinAddressPool.refillAll"))

      return { take, refill, refillAll }
    })
  )

  /** Keeps every pool full in the background. */
  static readonly worker = Layer.effectDiscard(Effect.gen(function*() {
    const pool = yield* BitcoinAddressPool
    yield* pool.refillAll.pipe(
      Effect.catchCause((cause) => Effect.logError("Bitcoin address pool refill failed", cause)),
      Effect.repeat(Schedule.spaced(Duration.seconds(5))),
      Effect.forkScoped
    )
  }))
}
