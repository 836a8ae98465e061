import { Context, Effect, Layer, Option, Schema, String as Str } from "effect"
import { SqlClient, SqlSchema, type Statement } from "effect/sql"
import type { InvoiceRecord, OutboxEvent, PaymentRecord } from "../domain/Invoice.ts"
import type { PaymentWrite } from "./PaymentWrite.ts"
import { EVIDENCE_LOCK_COLUMNS, EVIDENCE_READ_COLUMNS } from "./InvoiceReadSql.ts"
import { encodePaymentRow, type EvidenceOption, EvidenceRow, invoiceOf, InvoiceRow, PAYMENT_ROW_COLUMNS, PaymentRow } from "./InvoiceRows.ts"
import { mutableValues, paymentsOfInvoice } from "./SharedInvoiceRepo.ts"

export type { EvidenceOption }

export interface EvidenceState {
  readonly invoice: InvoiceRecord
  readonly option: EvidenceOption
  readonly payments: ReadonlyArray<PaymentRecord>
  /** The invoice row's version (`xmin`) as read. */
  readonly version: string
}

/**
 * A data-modifying statement ending in RETURNING 1 that touches rows only where `guard` (an SQL
 * boolean) holds, e.g. `UPDATE payments ... WHERE id = $1 AND ${guard} RETURNING 1`.
 */
type GuardedWrite = (guard: Statement.Fragment) => Statement.Fragment

const evidenceStateOf = (row: typeof EvidenceRow.Type, payments: ReadonlyArray<PaymentRecord>): EvidenceState => ({
  invoice: invoiceOf(row),
  option: row.optionJson,
  payments,
  version: row.version
})

/** Keys as the table's columns, for json_populate_record (which bypasses the client's name transform). */
const snakeKeys = (row: object) => Object.fromEntries(Object.entries(row).map(([key, value]) => [Str.camelToSnake(key), value]))

const PaymentOutput = Schema.Struct({ network: Schema.String, transactionHash: Schema.String, outputIndex: Schema.Number })

/** The evidence's reads, prepared over one client. */
const evidenceReads = (sql: SqlClient.SqlClient) => {
  // For statements whose select list already names every column in camelCase.
  const untransformed = sql.withoutTransforms()
  return {
    listPayments: paymentsOfInvoice(sql),
    findInvoiceLocked: SqlSchema.findOneOption({
      Request: Schema.String,
      Result: InvoiceRow,
      execute: (id) => sql`SELECT * FROM invoices WHERE id = ${id} FOR UPDATE`
    }),
    readEvidence: SqlSchema.findOneOption({
      Request: Schema.String,
      Result: EvidenceRow,
      execute: (optionId) =>
        untransformed`SELECT ${sql.literal(EVIDENCE_READ_COLUMNS)}
          FROM payment_options o JOIN invoices i ON i.id = o.invoice_id WHERE o.id = ${optionId}`
    }),
    lockEvidence: SqlSchema.findOneOption({
      Request: Schema.String,
      Result: EvidenceRow,
      execute: (optionId) =>
        untransformed`SELECT ${sql.literal(EVIDENCE_LOCK_COLUMNS)}
          FROM payment_options o JOIN invoices i ON i.id = o.invoice_id WHERE o.id = ${optionId} FOR UPDATE OF i`
    }),
    findPaymentLocked: SqlSchema.findOneOption({
      Request: PaymentOutput,
      Result: PaymentRow,
      execute: ({ network, outputIndex, transactionHash }) =>
        sql`SELECT * FROM payments WHERE network = ${network} AND transaction_hash = ${transactionHash}
          AND output_index = ${outputIndex} FOR UPDATE`
    }),
    findInvoiceIdOfPayment: SqlSchema.findOneOption({
      Request: PaymentOutput,
      Result: Schema.Struct({ invoiceId: Schema.String }),
      execute: ({ network, outputIndex, transactionHash }) =>
        sql`SELECT invoice_id FROM payments WHERE network = ${network} AND transaction_hash = ${transactionHash}
          AND output_index = ${outputIndex}`
    })
  }
}

/** The evidence's writes, over one client. */
const evidenceWrites = (sql: SqlClient.SqlClient) => {
  const PAYMENT_INSERT_COLUMNS = [
    ...PAYMENT_ROW_COLUMNS.filter(({ column }) => column !== "invalidated_at" && column !== "invalidation_reason").map(({ column }) => column),
    "block_height",
    "block_hash",
    "seen_in_mempool",
    "sweep_status",
    "payer_address"
  ].join(", ")

  /** The SQL of a payment write, applied only where `guard` holds; RETURNING 1 for each row it touched. */
  const paymentWriteSql = (write: PaymentWrite): GuardedWrite => {
    switch (write._tag) {
      case "InsertPayment": {
        const row = snakeKeys({
          ...encodePaymentRow(write.payment),
          blockHeight: write.blockHeight?.toString() ?? null,
          blockHash: write.blockHash,
          seenInMempool: write.seenInMempool,
          sweepStatus: write.sweepPending ? "pending" : null,
          payerAddress: write.payerAddress
        })
        const payment = write.payment
        // Typed by the table's row type, so the insert can select its values under a guard. A row stored
        // before EVM evidence was identified by the log's position within its transaction (migration
        // 0015) may be this same transfer under its block-level log index: it is not counted twice.
        return (guard) =>
          sql`INSERT INTO payments (${sql.literal(PAYMENT_INSERT_COLUMNS)})
            SELECT ${sql.literal(PAYMENT_INSERT_COLUMNS)} FROM json_populate_record(NULL::payments, ${JSON.stringify(row)}::json) WHERE ${guard}
              AND NOT EXISTS (SELECT 1 FROM payments earlier WHERE earlier.network = ${payment.network}
                AND earlier.transaction_hash = ${payment.transactionHash} AND earlier.block_log_index AND earlier.invalidated_at IS NULL
                AND earlier.payment_option_id = ${payment.paymentOptionId} AND earlier.amount_atomic = ${payment.amountAtomic.toString()}::numeric)
            ON CONFLICT (network, transaction_hash, output_index) DO NOTHING RETURNING 1`
      }
      case "UpdateConfirmations":
        return (guard) =>
          sql`UPDATE payments SET confirmations = ${write.confirmations}, confirmed_at = ${write.confirmedAt},
            invalidated_at = NULL, invalidation_reason = NULL, reorg_point = NULL,
            ${
            write.placement._tag === "Mempool"
              ? sql`block_height = NULL, block_hash = NULL, seen_in_mempool = true`
              : sql`block_height = COALESCE(${write.placement.height?.toString() ?? null}::bigint, block_height),
            block_hash = COALESCE(${write.placement.hash}::text, block_hash)`
          }
            WHERE id = ${write.paymentId} AND ${guard} RETURNING 1`
      case "InvalidatePayment":
        return (guard) =>
          sql`UPDATE payments SET invalidated_at = ${write.at}, invalidation_reason = ${write.reason},
            reorg_point = ${write.reorgPoint?.toString() ?? null}::bigint
            WHERE id = ${write.paymentId} AND ${guard} RETURNING 1`
      case "SettleReorg":
        return (guard) => sql`UPDATE payments SET reorg_point = NULL WHERE id = ${write.paymentId} AND reorg_point IS NOT NULL AND ${guard} RETURNING 1`
    }
  }

  // The invoice update and the outbox rows follow `write` only when it touched a row.
  const savePaymentChange = (head: Statement.Fragment, write: Statement.Fragment, invoice: InvoiceRecord, events: ReadonlyArray<OutboxEvent>) =>
    sql<{ readonly written: number }>`WITH ${head} written AS (${write}),
      updated AS (UPDATE invoices SET ${sql.update(mutableValues(invoice))}
        WHERE id = ${invoice.id} AND EXISTS (SELECT 1 FROM written) RETURNING id)${
      events.length === 0 ? sql`` : sql`,
      events AS (INSERT INTO outbox (invoice_id, merchant_id, event)
        SELECT (e->>'invoiceId')::uuid, (e->>'merchantId')::uuid, e->>'event'
        FROM json_array_elements(${JSON.stringify(events)}::json) WITH ORDINALITY AS x(e, position)
        WHERE EXISTS (SELECT 1 FROM updated) ORDER BY position)`
    }
      SELECT count(*)::int AS written FROM written`.pipe(
      Effect.map((rows) => Number(rows[0].written)),
      Effect.orDie
    )
  return { paymentWriteSql, savePaymentChange }
}

/**
 * Payment evidence's side of the invoices (chain watchers, the simulator, the test helpers): reads
 * of an option's invoice with or without its lock, and the payment writes that carry the
 * invoice's change and outbox events in the same statement. SQL failures become defects here.
 */
export class EvidenceRepo extends Context.Service<EvidenceRepo, {
  /** An option's invoice, what evidence needs of the option, and the payments, without a lock, for `saveIfUnchanged`. */
  readonly readForEvidence: (optionId: string) => Effect.Effect<Option.Option<EvidenceState>>
  /** The same under the invoice's row lock, for a transaction's `saveWith`. */
  readonly lockForEvidence: (optionId: string) => Effect.Effect<Option.Option<EvidenceState>>
  /** The invoice's row under its lock (within a transaction). */
  readonly lockForUpdate: (id: string) => Effect.Effect<Option.Option<InvoiceRecord>>
  /** The payment of one transaction output, under a row lock (within a transaction). */
  readonly lockPayment: (network: string, transactionHash: string, outputIndex: number) => Effect.Effect<Option.Option<PaymentRecord>>
  /** The invoice a transaction output paid, if any (no lock). */
  readonly invoiceIdOfPayment: (network: string, transactionHash: string, outputIndex: number) => Effect.Effect<Option.Option<string>>
  readonly listPayments: (invoiceId: string) => Effect.Effect<ReadonlyArray<PaymentRecord>>
  /**
   * Under the invoice's row lock (`lockForEvidence`, `lockForUpdate`): `write` (the payment row
   * behind the change), the invoice update and its outbox events as one statement, one round trip.
   * Returns how many rows `write` touched; the invoice is updated only when it touched one. When
   * that is not what the caller expected, it fails the transaction.
   */
  readonly saveWith: (write: PaymentWrite, invoice: InvoiceRecord, events: ReadonlyArray<OutboxEvent>) => Effect.Effect<number>
  /**
   * The same as one statement outside any transaction, applied only while the invoice is still at
   * `version` (as `readForEvidence` read it), is not locked by a transaction, and `write` touched a
   * row: true when it was applied, false when nothing was written. It never waits for the invoice.
   */
  readonly saveIfUnchanged: (version: string, write: PaymentWrite, invoice: InvoiceRecord, events: ReadonlyArray<OutboxEvent>) => Effect.Effect<boolean>
  readonly withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>()("Invoices/EvidenceRepo") {
  static readonly layer = Layer.effect(
    EvidenceRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const read = evidenceReads(sql)
      const { paymentWriteSql, savePaymentChange } = evidenceWrites(sql)

      return {
        withTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die)),
        readForEvidence: (optionId) => read.readEvidence(optionId).pipe(Effect.map(Option.map((found) => evidenceStateOf(found, found.paymentsJson))), Effect.orDie),
        lockForEvidence: (optionId) =>
          Effect.gen(function*() {
            const row = yield* read.lockEvidence(optionId)
            if (Option.isNone(row)) return Option.none()
            // Usually one round trip. When the lock had to wait for a change that then committed, the
            // payments come from the statement's older snapshot: read them again now that the lock is held.
            const found = row.value
            const payments = found.version === found.snapshotVersion ? found.paymentsJson : yield* read.listPayments(found.id)
            return Option.some(evidenceStateOf(found, payments))
          }).pipe(Effect.orDie),
        lockForUpdate: (id) => Effect.orDie(read.findInvoiceLocked(id)),
        saveWith: (write, invoice, events) => savePaymentChange(sql``, paymentWriteSql(write)(sql`TRUE`), invoice, events),
        saveIfUnchanged: (version, write, invoice, events) =>
          savePaymentChange(
            // SKIP LOCKED: the statement may share a pipelined connection with other requests' statements,
            // so it must not wait for a lock; a locked invoice is being changed, which the caller handles.
            sql`current AS (SELECT id FROM invoices WHERE id = ${invoice.id} AND xmin = ${version}::xid FOR UPDATE SKIP LOCKED),`,
            paymentWriteSql(write)(sql`EXISTS (SELECT 1 FROM current)`),
            invoice,
            events
          ).pipe(Effect.map((written) => written === 1)),
        listPayments: (invoiceId) => Effect.orDie(read.listPayments(invoiceId)),
        lockPayment: (network, transactionHash, outputIndex) => Effect.orDie(read.findPaymentLocked({ network, transactionHash, outputIndex })),
        invoiceIdOfPayment: (network, transactionHash, outputIndex) =>
          read.findInvoiceIdOfPayment({ network, transactionHash, outputIndex }).pipe(Effect.map(Option.map(({ invoiceId }) => invoiceId)), Effect.orDie)
      }
    })
  )
}
