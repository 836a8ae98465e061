import { InvoiceId, MerchantId, PaymentOptionId } from "../../src/domain/Ids.ts"
import { Invoice, type InvoiceRecord } from "../../src/domain/Invoice.ts"
import type { Micros } from "../../src/domain/Money.ts"
import type { InvoiceStatus } from "../../src/domain/Statuses.ts"
import { resolveTiming } from "../../src/domain/Timing.ts"

/**
 * An invoice record for the pure lifecycle tests: no optional field set, "immediate" timing of 60
 * minutes from `createdAt`, awaiting payment unless told otherwise.
 */
export const invoiceRecord = (fields: {
  readonly amountMicros: Micros
  readonly createdAt: Date
  readonly status?: InvoiceStatus
  readonly defaultPaymentOptionId?: string
}): InvoiceRecord =>
  Invoice.make({
    id: InvoiceId.make("inv"),
    merchantId: MerchantId.make("m"),
    amountMicros: fields.amountMicros,
    status: fields.status ?? "awaiting_payment",
    timing: resolveTiming({ mode: "immediate", expiresAfterMinutes: 60 }, fields.createdAt),
    productName: null,
    issuedBy: null,
    billTo: null,
    redirectUrl: null,
    merchantReference: null,
    customerId: null,
    customerEmail: null,
    metadata: null,
    defaultPaymentOptionId: PaymentOptionId.make(fields.defaultPaymentOptionId ?? "opt"),
    createdAt: fields.createdAt,
    livemode: true
  })
