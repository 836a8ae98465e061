import type { InvoiceStatus } from "./Statuses.ts"

/**
 * The statuses the payment deadline still applies to: the lifecycle machine's `DEADLINE_PASSED`
 * sources (test/unit/payable-rule.test.ts holds the two together; domain cannot ask the machine).
 */
export const PAYABLE_STATUSES: ReadonlySet<InvoiceStatus> = new Set<InvoiceStatus>(["awaiting_payment", "partially_paid"])

export type NotPayable =
  | { readonly _tag: "Status"; readonly status: InvoiceStatus }
  | { readonly _tag: "DeadlinePassed"; readonly payableUntilAt: Date }

/**
 * The one rule for "can this be paid now" (issue #44 item 8), for option `status`, the payer page,
 * Solana prepare and the refund offer: why a payer may not pay at `now`, or undefined when payable.
 * Payable means a status the deadline applies to and not after `payableUntilAt` by the clock,
 * whether or not the sweeper has expired it yet: a payment sent now would be late.
 */
export const notPayableReason = (
  invoice: { readonly status: InvoiceStatus; readonly timing: { readonly payableUntilAt: Date } },
  now: Date
): NotPayable | undefined =>
  !PAYABLE_STATUSES.has(invoice.status)
    ? { _tag: "Status", status: invoice.status }
    : now.getTime() > invoice.timing.payableUntilAt.getTime()
    ? { _tag: "DeadlinePassed", payableUntilAt: invoice.timing.payableUntilAt }
    : undefined

export const isPayableNow = (invoice: Parameters<typeof notPayableReason>[0], now: Date): boolean => notPayableReason(invoice, now) === undefined

/** The status a payer is shown: `expired` once the deadline has passed, even before the sweeper records it. */
export const payerFacingStatus = (invoice: Parameters<typeof notPayableReason>[0], now: Date): InvoiceStatus =>
  notPayableReason(invoice, now)?._tag === "DeadlinePassed" ? "expired" : invoice.status
