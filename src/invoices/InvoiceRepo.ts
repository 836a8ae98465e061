import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { IdempotencyClaim } from "../db/IdempotencyClaim.ts"
import type { InvoiceParts, InvoiceRecord, OutboxEvent } from "../domain/Invoice.ts"
import { INVOICE_LOCK_COLUMNS, INVOICE_READ_COLUMNS } from "./InvoiceReadSql.ts"
import { encodeInvoiceRow, encodeOptionRow, InvoiceLockRow, InvoicePartsRow, invoicePartsOf, InvoiceRow } from "./InvoiceRows.ts"
import { mutableValues, nonEmpty, paymentsOfInvoice } from "./SharedInvoiceRepo.ts"
import type { NewOption } from "../payments/OptionPlanner.ts"
import type { PriceQuote } from "../payments/PriceOracle.ts"
import { quoteRows } from "./InvoiceQuoteRepo.ts"

export type { InvoiceParts, NewOption }

const optionColumns = ({ position, reference, derivationIndex, ...option }: NewOption) => ({
  ...encodeOptionRow(option),
  position,
  reference,
  derivationIndex
})

/** The merchant's reads, prepared over one client. */
const merchantReads = (sql: SqlClient.SqlClient) => {
  // For statements whose select list already names every column in camelCase.
  const untransformed = sql.withoutTransforms()
  return {
    findParts: SqlSchema.findOneOption({
      Request: Schema.String,
      Result: InvoicePartsRow,
      execute: (id) => untransformed`SELECT ${sql.literal(INVOICE_READ_COLUMNS)} FROM invoices i WHERE i.id = ${id}`
    }),
    lockParts: SqlSchema.findOneOption({
      Request: Schema.String,
      Result: InvoiceLockRow,
      execute: (id) => untransformed`SELECT ${sql.literal(INVOICE_LOCK_COLUMNS)} FROM invoices i WHERE i.id = ${id} FOR UPDATE OF i`
    }),
    findInvoiceLocked: SqlSchema.findOneOption({
      Request: Schema.String,
      Result: InvoiceRow,
      execute: (id) => sql`SELECT * FROM invoices WHERE id = ${id} FOR UPDATE`
    }),
    findInvoiceRow: SqlSchema.findOneOption({
      Request: Schema.String,
      Result: InvoiceRow,
      execute: (id) => sql`SELECT * FROM invoices WHERE id = ${id}`
    }),
    listPayments: paymentsOfInvoice(sql)
  }
}

/** `, claimed AS (...)`: marks the running request's Idempotency-Key with the invoice, when there is one. */
const claimMark = (sql: SqlClient.SqlClient, invoiceId: string) =>
  Effect.map(Effect.serviceOption(IdempotencyClaim), (claim) =>
    Option.isNone(claim)
      ? sql``
      : sql`, claimed AS (UPDATE idempotency_keys SET resource_id = ${invoiceId}
          WHERE merchant_id = ${claim.value.merchantId} AND scope = ${claim.value.scope} AND key = ${claim.value.key})`)

/**
 * The merchant's invoices: creation, reads, and the lifecycle's changes (void, record a payment,
 * close an exception, expiry) with their outbox events. Evidence writes go through `EvidenceRepo`,
 * the deadline's claims through `ExpiryRepo`. SQL failures are infrastructure failures: they
 * become defects here, at the repository edge.
 */
export class InvoiceRepo extends Context.Service<InvoiceRepo, {
  /** `quotes`: what each asset's rate rested on (price sources, spread), recorded in invoice_quotes. */
  readonly insert: (
    invoice: InvoiceRecord,
    options: ReadonlyArray<NewOption>,
    events: ReadonlyArray<OutboxEvent>,
    quotes?: ReadonlyArray<PriceQuote>
  ) => Effect.Effect<void>
  readonly find: (id: string) => Effect.Effect<Option.Option<InvoiceParts>>
  /** The invoice's row under its lock (within a transaction). */
  readonly lockForUpdate: (id: string) => Effect.Effect<Option.Option<InvoiceRecord>>
  /** The invoice with its options and payments under the invoice's row lock (within a transaction). */
  readonly lockParts: (id: string) => Effect.Effect<Option.Option<InvoiceParts>>
  /** The invoices among `ids` that exist, by id: their rows alone, without options or payments. */
  readonly findInvoices: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, InvoiceRecord>>
  /** The invoice's lifecycle fields and deadline, its outbox events and the request's idempotency mark. */
  readonly save: (invoice: InvoiceRecord, events: ReadonlyArray<OutboxEvent>) => Effect.Effect<void>
  readonly withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>()("Invoices/InvoiceRepo") {
  static readonly layer = Layer.effect(
    InvoiceRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const read = merchantReads(sql)

      return {
        withTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die)),
        // One statement, so one round trip and atomic without BEGIN/COMMIT; the foreign keys of the
        // options and the outbox rows are checked at its end, when the invoice row exists.
        insert: ((invoice, options, events, quotes = []) =>
          Effect.flatMap(claimMark(sql, invoice.id), (claimed) => {
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
        find: (id) => read.findParts(id).pipe(Effect.map(Option.map(invoicePartsOf)), Effect.orDie),
        lockForUpdate: (id) => Effect.orDie(read.findInvoiceLocked(id)),
        lockParts: (id) =>
          Effect.gen(function*() {
            const row = yield* read.lockParts(id)
            if (Option.isNone(row)) return Option.none()
            // As in EvidenceRepo.lockForEvidence: a lock that waited for a committed change sees older payments; read them again.
            const parts = invoicePartsOf(row.value)
            return Option.some(row.value.version === row.value.snapshotVersion ? parts : { ...parts, payments: yield* read.listPayments(row.value.id) })
          }).pipe(Effect.orDie),
        // One primary-key lookup each, pipelined: a prepared `id = ANY($1)` could keep a generic
        // plan made while the table was small (a sequential scan), as the webhook bench showed.
        findInvoices: (ids) =>
          Effect.forEach(ids, (id) => read.findInvoiceRow(id), { concurrency: "unbounded" }).pipe(
            Effect.map((rows) => new Map(rows.flatMap((row) => Option.isSome(row) ? [[row.value.id as string, row.value] as const] : []))),
            Effect.orDie
          ),
        save: (invoice, events) =>
          // The update, its outbox events and the request's idempotency mark in one statement.
          Effect.flatMap(claimMark(sql, invoice.id), (claimed) =>
            (events.length === 0
              ? sql`WITH updated AS (UPDATE invoices SET ${sql.update(mutableValues(invoice))} WHERE id = ${invoice.id} RETURNING id)${claimed}
                SELECT 1`
              : sql`WITH updated AS (UPDATE invoices SET ${sql.update(mutableValues(invoice))} WHERE id = ${invoice.id} RETURNING id)${claimed}
                INSERT INTO outbox ${sql.insert(nonEmpty(events))}`).pipe(Effect.asVoid, Effect.orDie))
      }
    })
  )
}
