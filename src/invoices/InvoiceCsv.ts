import type { InvoiceSummary } from "./InvoiceList.ts"

/** The export's columns, in order: header name and how a row fills it. */
const COLUMNS: ReadonlyArray<readonly [string, (invoice: InvoiceSummary) => string | number | null]> = [
  ["id", (i) => i.id],
  ["createdAt", (i) => i.createdAt],
  ["status", (i) => i.status],
  ["amountUsd", (i) => i.amountUsd],
  ["paymentCoverage", (i) => i.paymentCoverage],
  ["receivedAmountUsd", (i) => i.receivedAmountUsd],
  ["confirmedAmountUsd", (i) => i.confirmedAmountUsd],
  ["productName", (i) => i.productName],
  ["merchantReference", (i) => i.merchantReference],
  ["customerEmail", (i) => i.customerEmail],
  ["payableUntilAt", (i) => i.payableUntilAt],
  ["paymentDetectedAt", (i) => i.paymentDetectedAt],
  ["confirmedAt", (i) => i.confirmedAt],
  ["paidOutOfBandAt", (i) => i.paidOutOfBandAt],
  ["exceptionType", (i) => i.exceptionType],
  ["exceptionStatus", (i) => i.exceptionStatus],
  ["exceptionAction", (i) => i.exceptionAction],
  ["exceptionClosedAt", (i) => i.exceptionClosedAt],
  ["payments", (i) => i.paymentsSummary]
]

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

export const csvHeader = (): string => `${COLUMNS.map(([name]) => name).join(",")}\r\n`

export const csvRow = (invoice: InvoiceSummary): string => `${COLUMNS.map(([, pick]) => csvField(pick(invoice))).join(",")}\r\n`
