import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { recordIssued } from "./DerivationLedgerRepo.ts"

/** A pooled address handed out, with how many free ones its key has left. */
const TakenAddress = Schema.Struct({ address: Schema.String, derivationIndex: Schema.Int, remaining: Schema.Int })
export type TakenAddress = typeof TakenAddress.Type
const ByKey = Schema.Struct({ xpub: Schema.String })

/** The pre-derived BIP84 addresses of each account key and its derivation counter. SQL and decode failures are defects here. */
export class BitcoinAddressPoolRepo extends Context.Service<BitcoinAddressPoolRepo, {
  /** The key's free addresses and the next index its counter would hand out (0 without a counter). */
  readonly state: (xpub: string) => Effect.Effect<{ readonly free: number; readonly nextIndex: number }>
  /**
   * Reserves [first, first + count) of the key's counter only if it still stands at `first`, and
   * stores the addresses derived for them, in one statement; answers how many it stored (none: another
   * derivation moved the counter first).
   */
  readonly storeDerived: (xpub: string, first: number, addresses: ReadonlyArray<string>) => Effect.Effect<number>
  /** Takes the key's lowest free address (SKIP LOCKED), with how many are left; undefined when none is free. */
  readonly takeFree: (xpub: string) => Effect.Effect<TakenAddress | undefined>
  /** Every bitcoin account key of an enabled payment method. */
  readonly keys: Effect.Effect<ReadonlyArray<string>>
}>()("Payments/BitcoinAddressPoolRepo") {
  static readonly layer = Layer.effect(
    BitcoinAddressPoolRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      /** The key's free addresses: what a refill tops up, and what a take reports as left. */
      const countFree = (xpub: string) => sql`SELECT count(*)::int FROM bitcoin_address_pool WHERE xpub = ${xpub} AND assigned_at IS NULL`
      const poolState = SqlSchema.findOne({
        Request: ByKey,
        Result: Schema.Struct({ free: Schema.Int, nextIndex: Schema.Int }),
        execute: ({ xpub }) =>
          sql`SELECT (${countFree(xpub)}) AS free,
            COALESCE((SELECT next_index FROM derivation_counters WHERE xpub = ${xpub}), 0)::int AS next_index`
      })
      // A key without a counter row stands at 0.
      const storeDerived = (xpub: string, first: number, addresses: ReadonlyArray<string>) =>
        sql<{ derivationIndex: number }>`WITH reserved AS (
            INSERT INTO derivation_counters (xpub, next_index) VALUES (${xpub}, ${first + addresses.length})
            ON CONFLICT (xpub) DO UPDATE SET next_index = EXCLUDED.next_index
            WHERE derivation_counters.next_index = ${first}
            RETURNING xpub, next_index),
          recorded AS (${recordIssued(sql, "reserved")})
          INSERT INTO bitcoin_address_pool (xpub, derivation_index, address)
          SELECT ${xpub}, derived.derivation_index, derived.address
          FROM (VALUES ${sql.csv(addresses.map((address, offset) => sql`(${first + offset}::bigint, ${address}::text)`))}) AS derived (derivation_index, address)
          WHERE EXISTS (SELECT 1 FROM reserved)
          RETURNING derivation_index::int AS derivation_index`
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

      return {
        state: (xpub) => Effect.orDie(poolState({ xpub })),
        storeDerived: (xpub, first, addresses) => storeDerived(xpub, first, addresses).pipe(Effect.map((stored) => stored.length), Effect.orDie),
        takeFree: (xpub) => takeFree({ xpub }).pipe(Effect.map(Option.getOrUndefined), Effect.orDie),
        keys: findKeys(undefined).pipe(Effect.map((rows) => rows.map(({ xpub }) => xpub)), Effect.orDie)
      }
    })
  )
}
