import { Context, Duration, Effect, Layer, Option, Schedule, Schema, Semaphore } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { PaymentWorker } from "./PaymentWorker.ts"

/** Wallets stop scanning after 20 unused addresses (BIP44's gap limit): never derive further ahead. */
export const GAP_LIMIT = 20

/**
 * Refills under way at once in a process: enough to keep up with creates at the service's full
 * rate, few enough that keys running low together cannot queue a burst of derivations on the
 * worker thread ahead of every create's options.
 */
export const REFILLS_AT_ONCE = 2

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

      // A refill derives before it writes, and writes in one statement: no connection and no lock
      // is held while the worker thread computes. Refills take turns in this process (a few at
      // once), so that the keys of many merchants running low together do not queue a burst of
      // derivations on the worker thread ahead of every create's options. Across instances, the
      // counter's compare-and-set below decides: of two refills of one key, the first to store
      // keeps its addresses, the other stores nothing.
      const refilling = new Set<string>()
      const turns = yield* Semaphore.make(REFILLS_AT_ONCE)
      const refill = (xpub: string, target: number = GAP_LIMIT) =>
        Effect.suspend(() => {
          if (refilling.has(xpub)) return Effect.succeed(0)
          refilling.add(xpub)
          return turns.withPermits(1)(refillOnce(xpub, target)).pipe(Effect.ensuring(Effect.sync(() => refilling.delete(xpub))))
        }).pipe(Effect.withSpan("BitcoinAddressPool.refill"))

      /** The key's free addresses: what a refill tops up, and what a take reports as left. */
      const countFree = (xpub: string) => sql`SELECT count(*)::int FROM bitcoin_address_pool WHERE xpub = ${xpub} AND assigned_at IS NULL`
      const poolState = SqlSchema.findOne({
        Request: ByKey,
        Result: Schema.Struct({ free: Schema.Int, nextIndex: Schema.Int }),
        execute: ({ xpub }) =>
          sql`SELECT (${countFree(xpub)}) AS free,
            COALESCE((SELECT next_index FROM derivation_counters WHERE xpub = ${xpub}), 0)::int AS next_index`
      })
      // Reserves [first, first + count) only if the counter still stands at `first`, and stores the
      // addresses derived for them in the same statement; no row back means another derivation
      // moved the counter first. A key without a counter row stands at 0.
      const storeDerived = (xpub: string, first: number, addresses: ReadonlyArray<string>) =>
        sql<{ derivationIndex: number }>`WITH reserved AS (
            INSERT INTO derivation_counters (xpub, next_index) VALUES (${xpub}, ${first + addresses.length})
            ON CONFLICT (xpub) DO UPDATE SET next_index = EXCLUDED.next_index
            WHERE derivation_counters.next_index = ${first}
            RETURNING next_index)
          INSERT INTO bitcoin_address_pool (xpub, derivation_index, address)
          SELECT ${xpub}, derived.derivation_index, derived.address
          FROM (VALUES ${sql.csv(addresses.map((address, offset) => sql`(${first + offset}::bigint, ${address}::text)`))}) AS derived (derivation_index, address)
          WHERE EXISTS (SELECT 1 FROM reserved)
          RETURNING derivation_index::int AS derivation_index`

      const refillOnce = (xpub: string, target: number) =>
        Effect.gen(function*() {
          const { free, nextIndex } = yield* poolState({ xpub })
          const missing = target - free
          if (missing <= 0) return 0
          const derived = yield* worker.bitcoinAddresses(xpub, nextIndex, missing)
          return (yield* storeDerived(xpub, nextIndex, derived)).length
        }).pipe(Effect.orDie)

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
              (${countFree(xpub)}) - 1 AS remaining
            FROM taken`
      })
      const findKeys = SqlSchema.findAll({
        Request: Schema.Void,
        Result: ByKey,
        execute: () => sql`SELECT DISTINCT xpub FROM payment_methods WHERE network = 'bitcoin' AND enabled AND xpub IS NOT NULL`
      })

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
