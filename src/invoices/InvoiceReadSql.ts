/**
 * SQL text of the invoice reads, shared by InvoiceRepo, EvidenceRepo and the bench's raw baseline
 * (scripts/bench/raw-server.ts), which must run the same statements. The select lists are derived
 * from the row schemas, so a new column needs no change here.
 */
import { EVIDENCE_OPTION_ROW_COLUMNS, INVOICE_ROW_COLUMNS, OPTION_ROW_COLUMNS, PAYMENT_ROW_COLUMNS, type RowColumn } from "./InvoiceRows.ts"

/** Exact integers travel as text: a JSON number would lose digits past 2^53. */
const jsonObject = (alias: string, columns: ReadonlyArray<RowColumn>) =>
  `json_build_object(${columns.map(({ column, exact, key }) => `'${key}', ${alias}.${column}${exact ? "::text" : ""}`).join(", ")})`

const OPTIONS_JSON = `COALESCE((SELECT json_agg(${jsonObject("o", OPTION_ROW_COLUMNS)} ORDER BY o.position)
  FROM payment_options o WHERE o.invoice_id = i.id), '[]'::json)`

const PAYMENTS_JSON = `COALESCE((SELECT json_agg(${jsonObject("p", PAYMENT_ROW_COLUMNS)} ORDER BY p.observed_at, p.id)
  FROM payments p WHERE p.invoice_id = i.id), '[]'::json)`

const INVOICE_COLUMNS_CAMEL = INVOICE_ROW_COLUMNS.map(({ column, key }) => (column === key ? `i.${column}` : `i.${column} AS "${key}"`))

/**
 * The select list of an invoice read (alias `i`): its columns, its options and its payments, every
 * name already in camelCase, so the read runs without the client's per-row name transform.
 */
export const INVOICE_READ_COLUMNS = [
  ...INVOICE_COLUMNS_CAMEL,
  `${OPTIONS_JSON} AS "optionsJson"`,
  `${PAYMENTS_JSON} AS "paymentsJson"`
].join(", ")

/**
 * The select list of an evidence read (invoice `i`, option `o`): the invoice, what evidence needs
 * of the option (not its QR code), the invoice's payments, and the version of the invoice row read
 * (its `xmin`), which every change of the invoice or its payments renews.
 */
export const EVIDENCE_READ_COLUMNS = [
  ...INVOICE_COLUMNS_CAMEL,
  `${jsonObject("o", EVIDENCE_OPTION_ROW_COLUMNS)} AS "optionJson"`,
  `${PAYMENTS_JSON} AS "paymentsJson"`,
  `i.xmin::text AS "version"`
].join(", ")

/**
 * The evidence read under the invoice's row lock, with the version the statement's snapshot saw.
 * When a concurrent change committed while the lock was awaited, READ COMMITTED returns the locked
 * row's newest version but the payments of the older snapshot: the two versions then differ.
 */
export const EVIDENCE_LOCK_COLUMNS = `${EVIDENCE_READ_COLUMNS}, (SELECT s.xmin::text FROM invoices s WHERE s.id = i.id) AS "snapshotVersion"`

/** An invoice read under its row lock, with the row's version and the one the statement's snapshot saw (see EVIDENCE_LOCK_COLUMNS). */
export const INVOICE_LOCK_COLUMNS = `${INVOICE_READ_COLUMNS}, i.xmin::text AS "version", (SELECT s.xmin::text FROM invoices s WHERE s.id = i.id) AS "snapshotVersion"`
