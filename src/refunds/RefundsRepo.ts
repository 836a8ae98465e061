import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { rowOf } from "../db/Columns.ts"
import { changingFields } from "../domain/EntitySchema.ts"
import type { RefundWebhookEventName } from "../domain/Statuses.ts"
import { Refund, type RefundRecord, RefundStatus } from "./Refund.ts"
import type { MerchantId } from "../domain/Ids.ts"

/** A `refunds` row: the entity with column codecs for its exact integers and timestamps. */
const RefundRow = rowOf(Refund)
const encodeRow = Schema.encodeSync(RefundRow)

/** What a change of a refund may update; the rest is fixed when it is requested. */
const MUTABLE_FIELDS = changingFields(Refund)

const mutableValues = (refund: RefundRecord) => {
  const row = encodeRow(refund)
  return Object.fromEntries(MUTABLE_FIELDS.map((field) => [field, row[field]]))
}

const MerchantRefunds = Schema.Struct({ merchantId: Schema.String, livemode: Schema.Boolean, status: Schema.NullOr(RefundStatus), limit: Schema.Number })

/** The refund watcher's queries, each of one mode's invoices: a testnet watcher sees only test invoices' refunds. */
const watcherQueries = (sql: SqlClient.SqlClient) => {
  const ofMode = (livemode: boolean) => sql`invoice_id IN (SELECT id FROM invoices WHERE livemode = ${livemode})`
  const watched = SqlSchema.findAll({
    Request: Schema.Struct({ networks: Schema.Array(Schema.String), livemode: Schema.Boolean }),
    Result: RefundRow,
    execute: ({ livemode, networks }) =>
      sql`SELECT * FROM refunds WHERE network = ANY(${networks}::text[]) AND status IN ('requested', 'sent') AND ${ofMode(livemode)}
          ORDER BY requested_at, id`
  })
  const sent = SqlSchema.findAll({
    Request: Schema.Struct({ network: Schema.String, livemode: Schema.Boolean }),
    Result: RefundRow,
    execute: ({ livemode, network }) => sql`SELECT * FROM refunds WHERE network = ${network} AND status = 'sent' AND ${ofMode(livemode)} ORDER BY requested_at, id`
  })
  const lockMinedAbove = SqlSchema.findAll({
    Request: Schema.Struct({ network: Schema.String, height: Schema.String, livemode: Schema.Boolean }),
    Result: RefundRow,
    execute: ({ height, livemode, network }) =>
      sql`SELECT * FROM refunds WHERE network = ${network} AND status IN ('sent', 'completed')
          AND block_height > ${height}::bigint AND ${ofMode(livemode)} ORDER BY id FOR UPDATE`
  })
  const lockBoundTo = SqlSchema.findAll({
    Request: Schema.Struct({ network: Schema.String, transactionHash: Schema.String, livemode: Schema.Boolean }),
    Result: RefundRow,
    execute: ({ livemode, network, transactionHash }) =>
      sql`SELECT * FROM refunds WHERE network = ${network} AND status IN ('sent', 'completed')
          AND transaction_hash = ${transactionHash} AND ${ofMode(livemode)} ORDER BY id FOR UPDATE`
  })
  return { watched, sent, lockMinedAbove, lockBoundTo }
}

/**
 * Persistence of refunds and of their outbox events (written in the same statement as the change).
 * SQL and decode failures are infrastructure failures: defects here, at the repository edge.
 */
export class RefundsRepo extends Context.Service<RefundsRepo, {
  /** Stores a new refund with its event. */
  readonly insert: (refund: RefundRecord, event: RefundWebhookEventName) => Effect.Effect<void>
  readonly find: (id: string) => Effect.Effect<Option.Option<RefundRecord>>
  /** The refund under its row lock, for the rest of the transaction. */
  readonly lock: (id: string) => Effect.Effect<Option.Option<RefundRecord>>
  /** The option's refunds, oldest first. */
  readonly listByOption: (invoiceId: string, paymentOptionId: string) => Effect.Effect<ReadonlyArray<RefundRecord>>
  /** Who paid the option: the senders of its confirmed, valid payments the watchers named, first payment first. */
  readonly payersOf: (paymentOptionId: string) => Effect.Effect<ReadonlyArray<string>>
  /** The invoice's refunds, oldest first. */
  readonly listByInvoice: (invoiceId: string) => Effect.Effect<ReadonlyArray<RefundRecord>>
  /** The merchant's refunds, newest first, optionally of one status. */
  /** The merchant's refunds of its live invoices, or of its test ones (`livemode` false), newest first. */
  readonly listByMerchant: (merchantId: MerchantId, livemode: boolean, status: RefundRecord["status"] | null, limit: number) => Effect.Effect<ReadonlyArray<RefundRecord>>
  /**
   * Saves a change of a refund read in status `from`, and its event when one is given, in one
   * statement; false (nothing written) when the refund is no longer in `from`.
   */
  readonly update: (refund: RefundRecord, from: RefundRecord["status"], event: RefundWebhookEventName | null) => Effect.Effect<boolean>
  /** Refunds `requested` or `sent` on these networks, of invoices of the mode: what the watchers look for. */
  readonly watched: (networks: ReadonlyArray<string>, livemode: boolean) => Effect.Effect<ReadonlyArray<RefundRecord>>
  /** Refunds `sent` on the network (mined, below their required confirmations). */
  readonly sent: (network: string, livemode: boolean) => Effect.Effect<ReadonlyArray<RefundRecord>>
  /** Refunds `sent` or `completed` on the network whose transaction's block is above `height`, locked. */
  readonly lockMinedAbove: (network: string, height: bigint, livemode: boolean) => Effect.Effect<ReadonlyArray<RefundRecord>>
  /** Refunds `sent` or `completed` on the network bound to the transaction, locked. */
  readonly lockBoundTo: (network: string, transactionHash: string, livemode: boolean) => Effect.Effect<ReadonlyArray<RefundRecord>>
  /** True when an option of any invoice or merchant has it as its deposit address or wallet-contract forwarder (EVM compared in lower case). */
  readonly isDepositAddress: (address: string, evm: boolean) => Effect.Effect<boolean>
  readonly withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>()("Refunds/RefundsRepo") {
  static readonly layer = Layer.effect(
    RefundsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const findById = SqlSchema.findOneOption({
        Request: Schema.String,
        Result: RefundRow,
        execute: (id) => sql`SELECT * FROM refunds WHERE id = ${id}`
      })
      const lockById = SqlSchema.findOneOption({
        Request: Schema.String,
        Result: RefundRow,
        execute: (id) => sql`SELECT * FROM refunds WHERE id = ${id} FOR UPDATE`
      })
      const listByOption = SqlSchema.findAll({
        Request: Schema.Struct({ invoiceId: Schema.String, paymentOptionId: Schema.String }),
        Result: RefundRow,
        execute: ({ invoiceId, paymentOptionId }) => sql`SELECT * FROM refunds WHERE invoice_id = ${invoiceId} AND payment_option_id = ${paymentOptionId} ORDER BY requested_at, id`
      })
      const payersOf = SqlSchema.findAll({
        Request: Schema.String,
        Result: Schema.Struct({ payerAddress: Schema.String }),
        execute: (paymentOptionId) =>
          sql`SELECT payer_address FROM payments WHERE payment_option_id = ${paymentOptionId} AND payer_address IS NOT NULL
            AND confirmed_at IS NOT NULL AND invalidated_at IS NULL ORDER BY observed_at, id`
      })
      const listByInvoice = SqlSchema.findAll({
        Request: Schema.String,
        Result: RefundRow,
        execute: (invoiceId) => sql`SELECT * FROM refunds WHERE invoice_id = ${invoiceId} ORDER BY requested_at, id`
      })
      const listByMerchant = SqlSchema.findAll({
        Request: MerchantRefunds,
        Result: RefundRow,
        execute: ({ limit, livemode, merchantId, status }) =>
          sql`SELECT * FROM refunds WHERE merchant_id = ${merchantId}
            AND invoice_id IN (SELECT id FROM invoices WHERE merchant_id = ${merchantId} AND livemode = ${livemode})${status === null ? sql`` : sql` AND status = ${status}`}
            ORDER BY requested_at DESC, id DESC LIMIT ${limit}`
      })
      const { lockBoundTo, lockMinedAbove, sent, watched } = watcherQueries(sql)

      const depositAddress = SqlSchema.findAll({
        Request: Schema.Struct({ address: Schema.String, evm: Schema.Boolean }),
        Result: Schema.Struct({ found: Schema.Number }),
        execute: ({ address, evm }) =>
          evm
            ? sql`SELECT 1 AS found FROM payment_options WHERE lower(destination_address) = ${address.toLowerCase()}
                OR lower(option_payload->>'contractAddress') = ${address.toLowerCase()} LIMIT 1`
            : sql`SELECT 1 AS found FROM payment_options WHERE destination_address = ${address} LIMIT 1`
      })

      const outboxOf = (refund: RefundRecord, event: RefundWebhookEventName | null) =>
        event === null ? sql`` : sql`, event AS (INSERT INTO outbox (invoice_id, merchant_id, event, refund_id)
          SELECT ${refund.invoiceId}, ${refund.merchantId}, ${event}, id FROM written)`

      return {
        insert: (refund, event) =>
          sql`WITH written AS (INSERT INTO refunds ${sql.insert(encodeRow(refund))} RETURNING id)${outboxOf(refund, event)}
            SELECT count(*)::int AS written FROM written`.pipe(Effect.asVoid, Effect.orDie),
        find: (id) => Effect.orDie(findById(id)),
        lock: (id) => Effect.orDie(lockById(id)),
        listByOption: (invoiceId, paymentOptionId) => Effect.orDie(listByOption({ invoiceId, paymentOptionId })),
        payersOf: (paymentOptionId) => payersOf(paymentOptionId).pipe(Effect.map((rows) => [...new Set(rows.map((row) => row.payerAddress))]), Effect.orDie),
        listByInvoice: (invoiceId) => Effect.orDie(listByInvoice(invoiceId)),
        listByMerchant: (merchantId, livemode, status, limit) => Effect.orDie(listByMerchant({ merchantId, livemode, status, limit })),
        update: (refund, from, event) =>
          sql<{ readonly written: number }>`WITH written AS (UPDATE refunds SET ${sql.update(mutableValues(refund))}
              WHERE id = ${refund.id} AND status = ${from} RETURNING id)${outboxOf(refund, event)}
            SELECT count(*)::int AS written FROM written`.pipe(Effect.map(([{ written }]) => written > 0), Effect.orDie),
        watched: (networks, livemode) => Effect.orDie(watched({ networks, livemode })),
        sent: (network, livemode) => Effect.orDie(sent({ network, livemode })),
        lockMinedAbove: (network, height, livemode) => Effect.orDie(lockMinedAbove({ network, height: height.toString(), livemode })),
        lockBoundTo: (network, transactionHash, livemode) => Effect.orDie(lockBoundTo({ network, transactionHash, livemode })),
        isDepositAddress: (address, evm) => depositAddress({ address, evm }).pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),
        withTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))
      }
    })
  )
}
