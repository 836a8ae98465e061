import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema, type Statement } from "effect/sql"

import { WatchedOption } from "../source/WatchedOption.ts"

export { WatchedOption }

/** Every new option is read (its sequence number fills the run), but only watched ones carry a key. */
const OptionRow = Schema.Struct({ ...WatchedOption.fields, key: Schema.NullOr(Schema.String) })
export type OptionRow = typeof OptionRow.Type

/** The keys watchers match options on, as SQL expressions over the option `o` (null: not watched). */
export interface WatchKeys {
  /** An EVM option's forwarder (wallet contract) or deposit address, lower-case. */
  readonly evmAddress: Statement.Fragment
  readonly destinationAddress: Statement.Fragment
  /** A Solana option's reference key. */
  readonly solanaReference: Statement.Fragment
  /** A Solana option's recipient and mint, `<recipient>:<mint>`. */
  readonly solanaRecipientAndMint: Statement.Fragment
}

/** The options of `networks` watched under `key`, of live or of test invoices only. */
export interface WatchedScope {
  /** Options after sequence number `after`, watched or not (a non-watched one has a null key), in sequence order. */
  readonly after: (after: bigint, limit: number) => Effect.Effect<ReadonlyArray<OptionRow>>
  /** Watched options in (`after`, `upTo`] still payable after `since`, in sequence order. */
  readonly payableBetween: (after: bigint, upTo: bigint, since: Date, limit: number) => Effect.Effect<ReadonlyArray<OptionRow>>
}

/** The payment options as the watchers' index reads them, by insertion sequence (`watch_seq`). SQL and decode failures are defects here. */
export class WatchedOptionsRepo extends Context.Service<WatchedOptionsRepo, {
  readonly keys: WatchKeys
  /** A live watcher sees only live invoices' options (`livemode` true), a testnet watcher only test invoices' ones. */
  readonly scope: (networks: ReadonlyArray<string>, key: Statement.Fragment, livemode: boolean) => WatchedScope
  /** The highest sequence number handed out so far (0 when none). */
  readonly maxSeq: Effect.Effect<bigint>
}>()("Chains/WatchedOptionsRepo") {
  static readonly layer = Layer.effect(
    WatchedOptionsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const scope = (networks: ReadonlyArray<string>, key: Statement.Fragment, livemode: boolean): WatchedScope => {
        // The other mode's options are read too (their sequence numbers fill the run) but carry no key.
        const watchedHere = sql`${sql.in("o.network", networks)} AND i.livemode = ${livemode} AND ${key} IS NOT NULL`
        const select = sql`SELECT o.watch_seq::text AS watch_seq, o.id AS option_id, o.invoice_id, i.merchant_id, o.network,
      o.asset_code, o.token_contract, CASE WHEN ${watchedHere} THEN ${key} END AS key, i.payable_until_at
      FROM payment_options o JOIN invoices i ON i.id = o.invoice_id`
        const newRows = SqlSchema.findAll({
          Request: Schema.Struct({ after: Schema.BigIntFromString, limit: Schema.Number }),
          Result: OptionRow,
          execute: ({ after, limit }) => sql`${select} WHERE o.watch_seq > ${after} ORDER BY o.watch_seq LIMIT ${limit}`
        })
        const oldRows = SqlSchema.findAll({
          Request: Schema.Struct({ after: Schema.BigIntFromString, upTo: Schema.BigIntFromString, since: Schema.Date, limit: Schema.Number }),
          Result: OptionRow,
          execute: ({ after, upTo, since, limit }) =>
            sql`${select} WHERE o.watch_seq > ${after} AND o.watch_seq <= ${upTo} AND i.payable_until_at > ${since} AND ${watchedHere}
          ORDER BY o.watch_seq LIMIT ${limit}`
        })
        return {
          after: (after, limit) => Effect.orDie(newRows({ after, limit })),
          payableBetween: (after, upTo, since, limit) => Effect.orDie(oldRows({ after, upTo, since, limit }))
        }
      }

      const maxSeq = SqlSchema.findOne({
        Request: Schema.Void,
        Result: Schema.Struct({ max: Schema.BigIntFromString }),
        execute: () => sql`SELECT COALESCE(max(watch_seq), 0)::text AS max FROM payment_options`
      })

      return {
        keys: {
          evmAddress: sql`lower(COALESCE(o.option_payload->>'contractAddress', o.destination_address))`,
          destinationAddress: sql`o.destination_address`,
          solanaReference: sql`o.reference`,
          solanaRecipientAndMint: sql`o.destination_address || ':' || o.token_contract`
        },
        scope,
        maxSeq: maxSeq(undefined).pipe(Effect.map(({ max }) => max), Effect.orDie)
      }
    })
  )
}
