import { Context, Effect, Layer, Option, Schema, String as Str } from "effect"
import { SqlClient, SqlSchema, type Statement } from "effect/sql"
import { IdempotencyClaim } from "../db/IdempotencyClaim.ts"
import { statusesAccepting } from "../lifecycle/Lifecycle.ts"
import { INVOICE_STATE_FIELDS, type InvoiceParts, type InvoiceRecord, type OutboxEvent, type PaymentRecord } from "../domain/Invoice.ts"
import type { PaymentWrite } from "./PaymentWrite.ts"
import { EVIDENCE_LOCK_COLUMNS, EVIDENCE_READ_COLUMNS, INVOICE_LOCK_COLUMNS, INVOICE_READ_COLUMNS } from "./InvoiceReadSql.ts"
import {
  encodeInvoiceRow,
  encodeOptionRow,
  encodePaymentRow,
  type EvidenceOption,
  EvidenceRow,
  invoiceOf,
  InvoiceLockRow,
  InvoicePartsRow,
  invoicePartsOf,
  InvoiceRow,
  PAYMENT_ROW_COLUMNS,
  PaymentRow
} from "./InvoiceRows.ts"
import { NullableDate } from "../domain/Timestamps.ts"
import type { NewOption } from "../payments/OptionPlanner.ts"
import type { PriceQuote } from "../payments/PriceOracle.ts"
import { quoteRows } from "./InvoiceQuoteRepo.ts"

export type { InvoiceParts, NewOption }

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

/** sql.insert takes a non-empty tuple of rows; callers check emptiness first. */
const nonEmpty = <A>(rows: ReadonlyArray<A>) => rows as readonly [A, ...Array<A>]

const optionColumns = ({ position, reference, derivationIndex, ...option }: NewOption) => ({
  ...encodeOptionRow(option),
  position,
  reference,
  derivationIndex
})

/** What a change of an invoice may update: the lifecycle's fields and the deadline; the rest is fixed at creation. */
const MUTABLE_FIELDS = [...INVOICE_STATE_FIELDS, "payableUntilAt"] as const

const mutableValues = (invoice: InvoiceRecord) => {
  const columns = encodeInvoiceRow(invoice)
  return Object.fromEntries(MUTABLE_FIELDS.map((field) => [field, columns[field]]))
}

const evidenceStateOf = (row: typeof EvidenceRow.Type, payments: ReadonlyArray<PaymentRecord>): EvidenceState => ({
  invoice: invoiceOf(row),
  option: row.optionJson,
  payments,
  version: row.version
})

/**
 * The statuses the deadline moves, as the lifecycle machine answers it, spelled as SQL literals:
 * the planner matches the partial index invoices_due_for_expiry only against a literal list.
 */
const EXPIRABLE_STATUSES = statusesAccepting({ type: "DEADLINE_PASSED" }).map((status) => `'${status}'`).join(", ")

/** Keys as the table's columns, for json_populate_record (which bypasses the client's name transform). */
const snakeKeys = (row: object) => Object.fromEntries(Object.entries(row).map(([key, value]) => [Str.camelToSnake(key), value]))

/** The repository's reads, prepared over one client. */
const invoiceReads = (sql: SqlClient.SqlClient) => {
  // For statements whose select list already names every column in camelCase.
  const untransformed = sql.withoutTransforms()

  const listPayments = SqlSchema.findAll({
    Request: Schema.String,
    Result: PaymentRow,
    execute: (invoiceId) => sql`SELECT * FROM payments WHERE invoice_id = ${invoiceId} ORDER BY observed_at, id`
  })
  const findParts = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: InvoicePartsRow,
    execute: (id) => untransformed`SELECT ${sql.literal(INVOICE_READ_COLUMNS)} FROM invoices i WHERE i.id = ${id}`
  })
  const findInvoiceLocked = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: InvoiceRow,
    execute: (id) => sql`SELECT * FROM invoices WHERE id = ${id} FOR UPDATE`
  })
  const findInvoiceRow = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: InvoiceRow,
    execute: (id) => sql`SELECT * FROM invoices WHERE id = ${id}`
  })
  const readEvidence = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: EvidenceRow,
    execute: (optionId) =>
      untransformed`SELECT ${sql.literal(EVIDENCE_READ_COLUMNS)}
        FROM payment_options o JOIN invoices i ON i.id = o.invoice_id WHERE o.id = ${optionId}`
  })
  const lockEvidence = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: EvidenceRow,
    execute: (optionId) =>
      untransformed`SELECT ${sql.literal(EVIDENCE_LOCK_COLUMNS)}
        FROM payment_options o JOIN invoices i ON i.id = o.invoice_id WHERE o.id = ${optionId} FOR UPDATE OF i`
  })
  const PaymentOutput = Schema.Struct({ network: Schema.String, transactionHash: Schema.String, outputIndex: Schema.Number })
  const findPaymentLocked = SqlSchema.findOneOption({
    Request: PaymentOutput,
    Result: PaymentRow,
    execute: ({ network, outputIndex, transactionHash }) =>
      sql`SELECT * FROM payments WHERE network = ${network} AND transaction_hash = ${transactionHash}
        AND output_index = ${outputIndex} FOR UPDATE`
  })
  const findInvoiceIdOfPayment = SqlSchema.findOneOption({
    Request: PaymentOutput,
    Result: Schema.Struct({ invoiceId: Schema.String }),
    execute: ({ network, outputIndex, transactionHash }) =>
      sql`SELECT invoice_id FROM payments WHERE network = ${network} AND transaction_hash = ${transactionHash}
        AND output_index = ${outputIndex}`
  })
  const WatchedNetwork = Schema.Struct({ network: Schema.String, chainTime: NullableDate })
  const findDueForExpiry = SqlSchema.findAll({
    Request: Schema.Struct({ now: Schema.Date, batchSize: Schema.Number, watched: Schema.Array(WatchedNetwork) }),
    Result: InvoiceRow,
    execute: ({ batchSize, now, watched }) =>
      sql`SELECT i.* FROM invoices i
        WHERE i.status IN (${sql.literal(EXPIRABLE_STATUSES)}) AND i.payable_until_at < ${now}${
        watched.length === 0 ? sql`` : sql`
          AND NOT EXISTS (SELECT 1 FROM payment_options o
            JOIN json_to_recordset(${JSON.stringify(watched)}::json) AS w(network text, "chainTime" timestamptz) ON w.network = o.network
            WHERE o.invoice_id = i.id AND (w."chainTime" IS NULL OR w."chainTime" < i.payable_until_at))`
      }
        ORDER BY i.payable_until_at LIMIT ${batchSize} FOR UPDATE OF i SKIP LOCKED`
  })
  const lockParts = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: InvoiceLockRow,
    execute: (id) => untransformed`SELECT ${sql.literal(INVOICE_LOCK_COLUMNS)} FROM invoices i WHERE i.id = ${id} FOR UPDATE OF i`
  })
  return {
    listPayments,
    findParts,
    lockParts,
    findInvoiceLocked,
    findInvoiceRow,
    readEvidence,
    lockEvidence,
    findPaymentLocked,
    findInvoiceIdOfPayment,
    findDueForExpiry
  }
}

/** The repository's writes, over one client. */
const invoiceWrites = (sql: SqlClient.SqlClient) => {
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

  /** `, claimed AS (...)`: marks the running request's Idempotency-Key with the invoice, when there is one. */
  const claimMark = (invoiceId: string) =>
    Effect.map(Effect.serviceOption(IdempotencyClaim), (claim) =>
      Option.isNone(claim)
        ? sql``
        : sql`, claimed AS (UPDATE idempotency_keys SET resource_id = ${invoiceId}
            WHERE merchant_id = ${claim.value.merchantId} AND scope = ${claim.value.scope} AND key = ${claim.value.key})`)
  return { paymentWriteSql, savePaymentChange, claimMark }
}

/**
 * Persistence of invoices, their options, payments and outbox events. SQL failures are
 * infrastructure failures: they become defects here, at the repository edge.
 */
export class InvoiceRepo extends Context.Service<InvoiceRepo, {
  /** `quotes`: what each asset's rate rested on (price sources, spread), recorded in invoice_quotes. */
  readonly insert: (
    invoice: InvoiceRecord,
    options: ReadonlyArray<NewOption>,
    events: ReadonlyArray<OutboxEvent>,
    quotes?: ReadonlyArray<PriceQuote>
  ) => Effect.Effect<void>
  readonly find: (id: string) => Effect.Effect<InvoiceParts | undefined>
  readonly lockForUpdate: (id: string) => Effect.Effect<InvoiceRecord | undefined>
  /** The invoice with its options and payments under the invoice's row lock (within a transaction). */
  readonly lockParts: (id: string) => Effect.Effect<InvoiceParts | undefined>
  /** The invoices among `ids` that exist, by id: their rows alone, without options or payments. */
  readonly findInvoices: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, InvoiceRecord>>
  /** An option's invoice, what evidence needs of the option, and the payments, without a lock, for `saveIfUnchanged`. */
  readonly readForEvidence: (optionId: string) => Effect.Effect<EvidenceState | undefined>
  /** The same under the invoice's row lock, for a transaction's `saveWith`. */
  readonly lockForEvidence: (optionId: string) => Effect.Effect<EvidenceState | undefined>
  readonly save: (invoice: InvoiceRecord, events: ReadonlyArray<OutboxEvent>) => Effect.Effect<void>
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
  /** The payment of one transaction output, under a row lock (within a transaction). */
  readonly lockPayment: (network: string, transactionHash: string, outputIndex: number) => Effect.Effect<PaymentRecord | undefined>
  /** The invoice a transaction output paid, if any (no lock). */
  readonly invoiceIdOfPayment: (network: string, transactionHash: string, outputIndex: number) => Effect.Effect<string | undefined>
  readonly listPayments: (invoiceId: string) => Effect.Effect<ReadonlyArray<PaymentRecord>>
  /**
   * Within a transaction: locks up to `batchSize` open invoices whose payable window ended before
   * `now`, skipping those locked by others and those with an option on a network whose watcher
   * has processed chain data only up to a time before the invoice's deadline (`chainTime` null: not yet).
   */
  readonly claimDueForExpiry: (
    now: Date,
    batchSize: number,
    watched: ReadonlyArray<{ readonly network: string; readonly chainTime: Date | null }>
  ) => Effect.Effect<ReadonlyArray<InvoiceRecord>>
  readonly withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>()("Invoices/InvoiceRepo") {
  static readonly layer = Layer.effect(
    InvoiceRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const read = invoiceReads(sql)
      const { listPayments } = read
      const { claimMark, paymentWriteSql, savePaymentChange } = invoiceWrites(sql)

      return {
        withTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die)),
        // One statement, so one round trip and atomic without BEGIN/COMMIT; the foreign keys of the
        // options and the outbox rows are checked at its end, when the invoice row exists.
        insert: ((invoice, options, events, quotes = []) =>
          Effect.flatMap(claimMark(invoice.id), (claimed) => {
            const quotesInsert = quotes.length === 0
              ? sql``
              : sql`, quotes AS (INSERT INTO invoice_quotes ${sql.insert(nonEmpty(quoteRows(invoice.id, quotes)))})`
            const optionsInsert = sql`${
              options.length === 0 ? sql`` : sql`, options AS (INSERT INTO payment_options ${sql.insert(nonEmpty(options.map(optionColumns)))})`
            }${quotesInsert}`
            return (events.length === 0
              ? sql`WITH invoice AS (INSERT INTO invoices ${sql.insert(encodeInvoiceRow(invoice))})${optionsInsert}${claimed} SELECT 1`
              : sql`WITH invoice AS (INSERT INTO invoices ${sql.insert(encodeInvoiceRow(invoice))})${optionsInsert}${claimed}
                INSERT INTO outbox ${sql.insert(nonEmpty(events))}`).pipe(Effect.asVoid, Effect.orDie)
          })),
        find: (id) => read.findParts(id).pipe(Effect.map((row) => Option.getOrUndefined(Option.map(row, invoicePartsOf))), Effect.orDie),
        lockForUpdate: ((id) => read.findInvoiceLocked(id).pipe(Effect.map(Option.getOrUndefined), Effect.orDie)),
        lockParts: ((id) =>
          Effect.gen(function*() {
            const row = Option.getOrUndefined(yield* read.lockParts(id))
            if (row === undefined) return undefined
            // As in lockForEvidence: a lock that waited for a committed change sees older payments; read them again.
            const parts = invoicePartsOf(row)
            return row.version === row.snapshotVersion ? parts : { ...parts, payments: yield* listPayments(row.id) }
          }).pipe(Effect.orDie)),
        // One primary-key lookup each, pipelined: a prepared `id = ANY($1)` could keep a generic
        // plan made while the table was small (a sequential scan), as the webhook bench showed.
        findInvoices: ((ids) =>
          Effect.forEach(ids, (id) => read.findInvoiceRow(id), { concurrency: "unbounded" }).pipe(
            Effect.map((rows) => new Map(rows.flatMap((row) => Option.isSome(row) ? [[row.value.id as string, row.value] as const] : []))),
            Effect.orDie
          )),
        readForEvidence: ((optionId) =>
          read.readEvidence(optionId).pipe(
            Effect.map((row) => Option.getOrUndefined(Option.map(row, (found) => evidenceStateOf(found, found.paymentsJson)))),
            Effect.orDie
          )),
        lockForEvidence: ((optionId) =>
          Effect.gen(function*() {
            const row = Option.getOrUndefined(yield* read.lockEvidence(optionId))
            if (row === undefined) return undefined
            // Usually one round trip. When the lock had to wait for a change that then committed, the
            // payments come from the statement's older snapshot: read them again now that the lock is held.
            const payments = row.version === row.snapshotVersion ? row.paymentsJson : yield* listPayments(row.id)
            return evidenceStateOf(row, payments)
          }).pipe(Effect.orDie)),
        save: ((invoice, events) =>
          // The update, its outbox events and the request's idempotency mark in one statement.
          Effect.flatMap(claimMark(invoice.id), (claimed) =>
            (events.length === 0
              ? sql`WITH updated AS (UPDATE invoices SET ${sql.update(mutableValues(invoice))} WHERE id = ${invoice.id} RETURNING id)${claimed}
                SELECT 1`
              : sql`WITH updated AS (UPDATE invoices SET ${sql.update(mutableValues(invoice))} WHERE id = ${invoice.id} RETURNING id)${claimed}
                INSERT INTO outbox ${sql.insert(nonEmpty(events))}`).pipe(Effect.asVoid, Effect.orDie))),
        saveWith: ((write, invoice, events) => savePaymentChange(sql``, paymentWriteSql(write)(sql`TRUE`), invoice, events)),
        saveIfUnchanged: ((version, write, invoice, events) =>
          savePaymentChange(
            // SKIP LOCKED: the statement may share a pipelined connection with other requests' statements,
            // so it must not wait for a lock; a locked invoice is being changed, which the caller handles.
            sql`current AS (SELECT id FROM invoices WHERE id = ${invoice.id} AND xmin = ${version}::xid FOR UPDATE SKIP LOCKED),`,
            paymentWriteSql(write)(sql`EXISTS (SELECT 1 FROM current)`),
            invoice,
            events
          ).pipe(Effect.map((written) => written === 1))),
        listPayments: ((invoiceId) => Effect.orDie(listPayments(invoiceId))),
        lockPayment:
          ((network, transactionHash, outputIndex) => read.findPaymentLocked({ network, transactionHash, outputIndex }).pipe(Effect.map(Option.getOrUndefined), Effect.orDie)),
        invoiceIdOfPayment: ((network, transactionHash, outputIndex) =>
          read.findInvoiceIdOfPayment({ network, transactionHash, outputIndex }).pipe(
            Effect.map((row) => Option.getOrUndefined(Option.map(row, ({ invoiceId }) => invoiceId))),
            Effect.orDie
          )),
        claimDueForExpiry: ((now, batchSize, watched) => Effect.orDie(read.findDueForExpiry({ now, batchSize, watched })))
      }
    })
  )
}
