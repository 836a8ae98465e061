import type { InvoiceRecord } from "../domain/Invoice.ts"
import type { InvoiceStatus } from "../domain/Statuses.ts"
import { statusesAccepting } from "./Lifecycle.ts"

/** The statuses that the deadline still applies to (asked of the lifecycle machine). */
const OPEN: ReadonlySet<InvoiceStatus> = new Set(statusesAccepting({ type: "DEADLINE_PASSED" }))

/**
 * Why a payer may not pay the invoice at `now`, or undefined when it is payable: a status the
 * deadline applies to, and not after `payableUntilAt` (judged by the clock, whether or not the
 * sweeper has expired it yet: a payment sent now would be late).
 */
export const notPayableReason = (
  invoice: Pick<InvoiceRecord, "status" | "timing">,
  now: Date
): { readonly _tag: "Status"; readonly status: InvoiceStatus } | { readonly _tag: "DeadlinePassed"; readonly payableUntilAt: Date } | undefined =>
  !OPEN.has(invoice.status)
    ? { _tag: "Status", status: invoice.status }
    : now.getTime() > invoice.timing.payableUntilAt.getTime()
    ? { _tag: "DeadlinePassed", payableUntilAt: invoice.timing.payableUntilAt }
    : undefined

/** The status a payer is shown: `expired` once the deadline has passed, even before the sweeper records it. */
export const payerFacingStatus = (invoice: Pick<InvoiceRecord, "status" | "timing">, now: Date): InvoiceStatus =>
  notPayableReason(invoice, now)?._tag === "DeadlinePassed" ? "expired" : invoice.status
