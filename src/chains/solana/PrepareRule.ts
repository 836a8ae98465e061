import type { InvoiceRecord } from "../../domain/Invoice.ts"
import { notPayableReason } from "../../domain/Payable.ts"

/** Why Solana prepare refuses the invoice at `now` (409), or undefined: the one payable rule, worded for the payer. */
export const preparationRefusal = (invoice: Pick<InvoiceRecord, "status" | "timing">, now: Date): string | undefined => {
  const notPayable = notPayableReason(invoice, now)
  return notPayable === undefined
    ? undefined
    : notPayable._tag === "Status"
    ? `This invoice cannot be paid: it is ${notPayable.status}`
    : `This invoice cannot be paid: its payment window ended at ${notPayable.payableUntilAt.toISOString()}`
}
