import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"

/** An account key whose counter would hand out an index this database has already issued. */
export interface CounterBehind {
  readonly xpub: string
  readonly nextIndex: number
  readonly highestIssued: number
}

const CounterBehindRow = Schema.Struct({ xpub: Schema.String, nextIndex: Schema.Int, highestIssued: Schema.Int })
const KeyRow = Schema.Struct({ xpub: Schema.String })
const CounterRow = Schema.Struct({ xpub: Schema.String, nextIndex: Schema.Int })
const Keys = Schema.Struct({ xpubs: Schema.Array(Schema.String) })

/**
 * The statement part that records the counter rows `moved` (a CTE returning `xpub, next_index`)
 * as issued up to their new position; the record never goes down. Every counter move carries it.
 */
export const recordIssued = (sql: SqlClient.SqlClient, moved: string) =>
  sql`INSERT INTO derivation_issued (xpub, highest_index) SELECT xpub, next_index - 1 FROM ${sql(moved)} WHERE next_index > 0
    ON CONFLICT (xpub) DO UPDATE SET highest_index = EXCLUDED.highest_index, updated_at = now()
    WHERE derivation_issued.highest_index < EXCLUDED.highest_index`

/**
 * The SQL of DerivationLedger: the per-key record of issued derivation indexes (`derivation_issued`)
 * read against the counters (`derivation_counters`) and the bitcoin address pool. SQL failures are
 * defects here, at the repository edge.
 */
export class DerivationLedgerRepo extends Context.Service<DerivationLedgerRepo, {
  /** The keys (all when `xpubs` is undefined) whose counter is at or below an index already issued. */
  readonly behind: (xpubs?: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<CounterBehind>>
  /** Of `xpubs`, those no address was handed out from in this database (pre-derived pool addresses do not count) and no start index moved. */
  readonly neverIssued: (xpubs: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>>
  /** The next index each key's counter hands out (0 for a key without one). */
  readonly nextIndexes: (xpubs: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, number>>
  /** Raises the key's counter to `startIndex` (never lowers it) and drops pooled bitcoin addresses below it, never handed out. */
  readonly raiseStart: (xpub: string, startIndex: number) => Effect.Effect<void>
}>()("Payments/DerivationLedgerRepo") {
  static readonly layer = Layer.effect(
    DerivationLedgerRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const everyKey = (xpubs: ReadonlyArray<string> | undefined) => xpubs === undefined ? sql`true` : sql`xpub = ANY(${xpubs})`
      // The pool's rows count as issued too: a counter behind them would derive them a second time.
      const findBehind = (xpubs: ReadonlyArray<string> | undefined) =>
        SqlSchema.findAll({
          Request: Schema.Void,
          Result: CounterBehindRow,
          execute: () =>
            sql`SELECT known.xpub, COALESCE(c.next_index, 0)::int AS next_index, known.highest::int AS highest_issued
              FROM (SELECT xpub, max(highest) AS highest FROM (
                  SELECT xpub, highest_index AS highest FROM derivation_issued WHERE ${everyKey(xpubs)}
                  UNION ALL SELECT xpub, max(derivation_index) FROM bitcoin_address_pool WHERE ${everyKey(xpubs)} GROUP BY xpub
                ) AS issued GROUP BY xpub) AS known
              LEFT JOIN derivation_counters c ON c.xpub = known.xpub
              WHERE COALESCE(c.next_index, 0) <= known.highest ORDER BY known.xpub`
        })(undefined)
      const findNeverIssued = SqlSchema.findAll({
        Request: Keys,
        Result: KeyRow,
        execute: ({ xpubs }) =>
          // Every index the counter passed still sits unassigned in the bitcoin pool (none for EVM
          // keys): nothing was handed out here, and no start index moved it. A counter behind its
          // record is not new, it is refused (findBehind).
          sql`SELECT DISTINCT key AS xpub FROM unnest(${xpubs}::text[]) AS key
            WHERE COALESCE((SELECT next_index FROM derivation_counters c WHERE c.xpub = key), 0) =
                (SELECT count(*) FROM bitcoin_address_pool p WHERE p.xpub = key AND p.assigned_at IS NULL)
              AND NOT EXISTS (SELECT 1 FROM bitcoin_address_pool p WHERE p.xpub = key AND p.assigned_at IS NOT NULL)
              AND COALESCE((SELECT next_index FROM derivation_counters c WHERE c.xpub = key), 0) >
                COALESCE((SELECT highest_index FROM derivation_issued i WHERE i.xpub = key), -1) ORDER BY 1`
      })
      const findCounters = SqlSchema.findAll({
        Request: Keys,
        Result: CounterRow,
        execute: ({ xpubs }) => sql`SELECT xpub, next_index::int AS next_index FROM derivation_counters WHERE xpub = ANY(${xpubs})`
      })
      return {
        behind: (xpubs) => Effect.orDie(findBehind(xpubs)),
        neverIssued: (xpubs) => xpubs.length === 0 ? Effect.succeed([]) : findNeverIssued({ xpubs }).pipe(Effect.map((rows) => rows.map(({ xpub }) => xpub)), Effect.orDie),
        nextIndexes: (xpubs) =>
          findCounters({ xpubs }).pipe(
            Effect.map((rows) => new Map(xpubs.map((xpub) => [xpub, rows.find((row) => row.xpub === xpub)?.nextIndex ?? 0]))),
            Effect.orDie
          ),
        raiseStart: (xpub, startIndex) =>
          startIndex <= 0 ? Effect.void : Effect.gen(function*() {
            yield* sql`WITH raised AS (INSERT INTO derivation_counters (xpub, next_index) VALUES (${xpub}, ${startIndex})
              ON CONFLICT (xpub) DO UPDATE SET next_index = GREATEST(derivation_counters.next_index, EXCLUDED.next_index)
              RETURNING xpub, next_index) ${recordIssued(sql, "raised")}`
            yield* sql`DELETE FROM bitcoin_address_pool WHERE xpub = ${xpub} AND assigned_at IS NULL AND derivation_index < ${startIndex}`
          }).pipe(sql.withTransaction, Effect.orDie)
      }
    })
  )
}
