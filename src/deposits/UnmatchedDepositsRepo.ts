import { Context, Data, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { isStorableInstant } from "../db/TimestampRange.ts"
import { InvoiceNotFound } from "../domain/Errors.ts"
import { UnmatchedDeposit } from "./UnmatchedDeposit.ts"
import type { MerchantId } from "../domain/Ids.ts"

export class InvalidCursor extends Data.TaggedError("InvalidCursor")<{}> {}

export const DEFAULT_PAGE_SIZE = 50
export const MAX_PAGE_SIZE = 100

export interface UnmatchedDepositPage {
  readonly data: ReadonlyArray<UnmatchedDeposit>
  readonly nextCursor: string | null
}

/** Where a page ends, newest first: detection time (to the microsecond, as stored) and id. */
const Position = Schema.Struct({ at: Schema.String, id: Schema.String })
type Position = typeof Position.Type

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const MICROSECOND_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/

const encodeCursor = (position: Position) => Buffer.from(`${position.at}|${position.id}`).toString("base64url")

const decodeCursor = (cursor: string): Effect.Effect<Position, InvalidCursor> => {
  const [at, id, ...rest] = Buffer.from(cursor, "base64url").toString("utf8").split("|")
  // The text goes to PostgreSQL as it is: a day that does not exist (Feb 30) or year 0 would fail the statement.
  return rest.length === 0 && id !== undefined && UUID.test(id) && MICROSECOND_UTC.test(at) && isStorableInstant(Date.parse(at)) &&
      new Date(Date.parse(at)).toISOString().slice(0, 19) === at.slice(0, 19)
    ? Effect.succeed({ at, id })
    : Effect.fail(new InvalidCursor())
}

const PageRow = Schema.Struct({ ...UnmatchedDeposit.fields, position: Schema.String })

/**
 * The merchant's view of unmatched deposits (the chain watchers record them). SQL failures are
 * defects here, at the repository edge.
 */
export class UnmatchedDepositsRepo extends Context.Service<UnmatchedDepositsRepo, {
  /** A page of the merchant's unmatched deposits to its live invoices (test ones with `livemode` false), newest first; `cursor` continues after a previous page. */
  readonly page: (
    merchantId: MerchantId,
    options: { readonly livemode?: boolean | undefined; readonly cursor?: string | undefined; readonly limit?: number | undefined }
  ) => Effect.Effect<UnmatchedDepositPage, InvalidCursor>
  /** Every unmatched deposit of one of the merchant's invoices, newest first; another merchant's invoice is not found. */
  readonly forInvoice: (merchantId: MerchantId, invoiceId: string) => Effect.Effect<ReadonlyArray<UnmatchedDeposit>, InvoiceNotFound>
}>()("Deposits/UnmatchedDepositsRepo") {
  static readonly layer = Layer.effect(
    UnmatchedDepositsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const isoUtc = (column: string, precision: "MS" | "US" = "MS") => sql.literal(`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.${precision}"Z"')`)
      // The times are rendered under their own names, so ORDER BY and WHERE name the table's columns qualified (`d.`):
      // an unqualified ORDER BY name would sort by the rendered text, cut to the millisecond.
      const columns = sql`d.id, d.invoice_id, d.network, d.asset_code, d.token_contract, d.to_address, d.transaction_hash, d.output_index,
        d.amount_atomic::text AS amount_atomic, d.block_height::text AS block_height, d.block_hash, ${isoUtc("d.chain_time")} AS chain_time,
        d.reason, ${isoUtc("d.detected_at")} AS detected_at, ${isoUtc("d.invalidated_at")} AS invalidated_at, d.invalidation_reason`

      const findPage = SqlSchema.findAll({
        Request: Schema.Struct({ merchantId: Schema.String, livemode: Schema.Boolean, after: Schema.NullOr(Position), limit: Schema.Int }),
        Result: PageRow,
        execute: ({ merchantId, livemode, after, limit }) =>
          sql`SELECT ${columns}, ${isoUtc("d.detected_at", "US")} AS position FROM unmatched_deposits d
            WHERE d.merchant_id = ${merchantId} AND EXISTS (SELECT 1 FROM invoices i WHERE i.id = d.invoice_id AND i.livemode = ${livemode})${
            after === null ? sql`` : sql` AND (d.detected_at, d.id) < (${after.at}::timestamptz, ${after.id}::uuid)`
          }
            ORDER BY d.detected_at DESC, d.id DESC LIMIT ${limit}`
      })
      const findForInvoice = SqlSchema.findAll({
        Request: Schema.Struct({ merchantId: Schema.String, invoiceId: Schema.String }),
        Result: UnmatchedDeposit,
        execute: ({ merchantId, invoiceId }) =>
          sql`SELECT ${columns} FROM unmatched_deposits d WHERE d.invoice_id = ${invoiceId} AND d.merchant_id = ${merchantId}
            ORDER BY d.detected_at DESC, d.id DESC`
      })
      const invoiceOwned = (merchantId: MerchantId, invoiceId: string) =>
        sql`SELECT 1 FROM invoices WHERE id = ${invoiceId} AND merchant_id = ${merchantId}`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        )

      return {
        page: Effect.fn("UnmatchedDepositsRepo.page")(function*(merchantId, options) {
          const limit = Math.min(Math.max(options.limit ?? DEFAULT_PAGE_SIZE, 1), MAX_PAGE_SIZE)
          const after = options.cursor === undefined ? null : yield* decodeCursor(options.cursor)
          const rows = yield* Effect.orDie(findPage({ merchantId, livemode: options.livemode ?? true, after, limit: limit + 1 }))
          const page = rows.slice(0, limit)
          const last = page.at(-1)
          return {
            data: page.map(({ position: _position, ...deposit }) => deposit),
            nextCursor: rows.length > limit && last !== undefined ? encodeCursor({ at: last.position, id: last.id }) : null
          }
        }),
        forInvoice: Effect.fn("UnmatchedDepositsRepo.forInvoice")(function*(merchantId, invoiceId) {
          if (!(yield* invoiceOwned(merchantId, invoiceId))) return yield* new InvoiceNotFound({ invoiceId })
          return yield* Effect.orDie(findForInvoice({ merchantId, invoiceId }))
        })
      }
    })
  )
}
