import { microsToNumber } from "../domain/Money.ts"
import { INVOICE_STATUSES, type InvoiceStatus } from "../domain/Statuses.ts"
import type { OverviewRecord } from "./OverviewRepo.ts"

/** How many days the overview's chart of USD received covers, today included. */
export const OVERVIEW_DAYS = 30

const DAY_MS = 86_400_000

/** The first instant the overview counts: midnight UTC, `OVERVIEW_DAYS - 1` days before `now`'s day. */
export const overviewStart = (now: Date): Date => new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS - (OVERVIEW_DAYS - 1) * DAY_MS)

/** The overview as the API answers it: every status (0 where none), and every day of the period (0 where nothing came in), oldest first. */
export const overviewView = (record: OverviewRecord, now: Date) => {
  const counts = new Map(record.statusCounts.map((row) => [row.status, row.count]))
  const received = new Map(record.receivedByDay.map((row) => [row.day, row.usdMicros]))
  const start = overviewStart(now).getTime()
  return {
    invoicesByStatus: INVOICE_STATUSES.map((status: InvoiceStatus) => ({ status, count: counts.get(status) ?? 0 })),
    receivedByDay: Array.from({ length: OVERVIEW_DAYS }, (_, index) => {
      const day = new Date(start + index * DAY_MS).toISOString().slice(0, 10)
      return { day, amountUsd: microsToNumber(received.get(day) ?? 0n) }
    }),
    openExceptions: record.openExceptions,
    waitingRefunds: record.waitingRefunds
  }
}
