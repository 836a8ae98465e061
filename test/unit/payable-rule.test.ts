import { describe, expect, it } from "vitest"
import { preparationRefusal } from "../../src/chains/solana/PrepareRule.ts"
import type { InvoiceParts, InvoiceRecord, PaymentOptionRecord } from "../../src/domain/Invoice.ts"
import { optionView } from "../../src/domain/InvoiceViews.ts"
import { PAYABLE_STATUSES } from "../../src/domain/Payable.ts"
import { INVOICE_STATUSES } from "../../src/domain/Statuses.ts"
import { statusesAccepting } from "../../src/lifecycle/Lifecycle.ts"
import { payPage } from "../../src/pay/PayPageView.ts"
import { STRINGS } from "../../src/pay/Strings.ts"

/**
 * Issue #44 item 8: one rule for "can this be paid now". For every status, before and after
 * payableUntilAt, the option view's `status`, the payer page's payability and Solana prepare's
 * decision agree: an `active` option is exactly one prepare would prepare and the page offers.
 */

const DEADLINE = new Date("2026-01-01T12:00:00.000Z")
const BEFORE = new Date(DEADLINE.getTime() - 60_000)
const AFTER = new Date(DEADLINE.getTime() + 1)

const invoiceIn = (status: InvoiceRecord["status"]) =>
  ({
    id: "00000000-0000-4000-8000-000000000001",
    merchantId: "00000000-0000-4000-8000-000000000002",
    amountMicros: 5_000_000n,
    status,
    timing: { mode: "immediate", expiresAfterMinutes: 60, payableUntilAt: DEADLINE },
    productName: "Tea",
    issuedBy: "Shop",
    billTo: null,
    redirectUrl: null,
    merchantReference: null,
    customerId: null,
    customerEmail: null,
    metadata: null,
    defaultPaymentOptionId: "00000000-0000-4000-8000-000000000003",
    lastPaymentOptionId: null,
    lastTransactionHash: null,
    receivedMicros: 0n,
    confirmedMicros: 0n,
    confirmations: 0,
    paymentDetectedAt: null,
    confirmedAt: null,
    paidOutOfBandAt: null,
    paidOutOfBandNote: null,
    voidedAt: null,
    exceptionType: null,
    exceptionStatus: null,
    exceptionAction: null,
    exceptionNote: null,
    exceptionClosedAt: null,
    createdAt: new Date(DEADLINE.getTime() - 3_600_000),
    lastPaymentObservedAt: null
  }) as unknown as InvoiceRecord

const option = {
  id: "00000000-0000-4000-8000-000000000003",
  invoiceId: "00000000-0000-4000-8000-000000000001",
  railType: "address_transfer",
  assetCode: "USDC",
  network: "ethereum",
  tokenContract: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
  decimals: 6,
  quotedAtomic: 5_000_000n,
  quoteRate: "1",
  destinationAddress: "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
  paymentUri: "ethereum:0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48@1/transfer?address=0x9858EfFD232B4033E47d90003D41EC34EcaEda94&uint256=5000000",
  qrCode: null,
  status: "active",
  isDefault: true,
  optionPayload: null,
  requiredConfirmations: 1
} as unknown as PaymentOptionRecord

/** The page is payable when it offers the option and counts down to the deadline. */
const pageIsPayable = (invoice: InvoiceRecord, now: Date) => {
  const parts: InvoiceParts = { invoice, options: [option], payments: [] }
  const html = payPage(parts, { language: "en", t: STRINGS.en, assets: { script: "s.js", style: "s.css", icon: "i.svg" }, now })
  const offers = html.includes(`id="option-${option.id}"`)
  expect(html.includes("data-payable-until="), `${invoice.status} countdown`).toBe(offers)
  return offers
}

describe("one rule for whether an invoice can be paid now", () => {
  it("is the lifecycle machine's set of statuses the deadline applies to", () => {
    expect([...PAYABLE_STATUSES].sort()).toEqual([...statusesAccepting({ type: "DEADLINE_PASSED" })].sort())
  })

  for (const status of INVOICE_STATUSES) {
    for (const [when, now] of [["before", BEFORE], ["after", AFTER]] as const) {
      it(`${status} ${when} payableUntilAt: option status, pay page and Solana prepare agree`, () => {
        const invoice = invoiceIn(status)
        const payable = (status === "awaiting_payment" || status === "partially_paid") && when === "before"
        expect(optionView(option, invoice, now).status).toBe(payable ? "active" : "inactive")
        expect(preparationRefusal(invoice, now) === undefined).toBe(payable)
        expect(pageIsPayable(invoice, now)).toBe(payable)
      })
    }
  }
})
