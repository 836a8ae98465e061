import { Schema } from "effect"
import { type InvoiceSummary, InvoiceSummaryView } from "../domain/InvoiceResponses.ts"

/** The export's columns: the summary's fields, in order (contract/InvoiceResponses.ts). */
const COLUMNS = Object.keys(InvoiceSummaryView.fields) as ReadonlyArray<keyof InvoiceSummary>
/** Header names that differ from the field's. */
const HEADERS: Partial<Record<keyof InvoiceSummary, string>> = { paymentsSummary: "payments" }

/**
 * One RFC 4180 field. Text that a spreadsheet would run as a formula (starting with =, +, -, @,
 * tab or carriage return: OWASP's list) is prefixed with a single quote, so a customer-supplied
 * reference such as `=HYPERLINK(...)` is shown, never evaluated. Numbers are written as numbers.
 */
export const csvField = (value: string | number | null): string => {
  if (value === null) return ""
  if (typeof value === "number") return String(value)
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value
  return /[",\r\n]/.test(text) ? `"${text.replaceAll("\"", "\"\"")}"` : text
}

export const csvHeader = (): string => `${COLUMNS.map((name) => HEADERS[name] ?? name).join(",")}\r\n`

/** The summary as the list's JSON shows it (its schema encodes it: timestamps as ISO 8601 text). */
const encodeSummary = Schema.encodeSync(InvoiceSummaryView)

export const csvRow = (invoice: InvoiceSummary): string => {
  const encoded = encodeSummary(invoice)
  return `${COLUMNS.map((name) => csvField(encoded[name])).join(",")}\r\n`
}
