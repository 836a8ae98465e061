import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { InvoiceId, MerchantId, PaymentOptionId, RefundId } from "../../src/domain/Ids.ts"
import { InvoiceSummaryView, InvoiceView } from "../../src/domain/InvoiceResponses.ts"
import { merchantInvoiceView, WEBHOOK_SHOWN_FIELDS, webhookInvoiceView } from "../../src/domain/InvoiceViews.ts"
import { Micros } from "../../src/domain/Money.ts"
import { csvRow } from "../../src/invoices/InvoiceCsv.ts"
import { Refund, type RefundRecord, refundView } from "../../src/refunds/Refund.ts"
import { webhookInvoiceJson, webhookRefundJson } from "../../src/webhooks/WebhookPayloads.ts"
import { invoiceRecord } from "../support/InvoiceFixtures.ts"

// A view is a domain value (Dates); its schema writes the JSON (#54 item 2). Webhook bodies keep
// the bytes they had when the views wrote ISO text themselves: `JSON.stringify` of a view (a Date's
// toJSON is its ISO text) is the body as it was, and the schema's encoding must be that, key order included.

const createdAt = new Date("2026-03-01T10:00:00.000Z")
const invoice = {
  ...invoiceRecord({ amountMicros: Micros.make(25_000_000n), createdAt, status: "confirmed" }),
  receivedMicros: Micros.make(30_000_000n),
  confirmedMicros: Micros.make(30_000_000n),
  confirmations: 12,
  paymentDetectedAt: new Date("2026-03-01T10:05:00.123Z"),
  confirmedAt: new Date("2026-03-01T10:20:00.456Z"),
  lastPaymentObservedAt: new Date("2026-03-01T10:05:00.123Z"),
  metadata: { order: "A-1" }
}

const refund: RefundRecord = Refund.make({
  id: RefundId.make("ref"),
  merchantId: MerchantId.make("m"),
  invoiceId: InvoiceId.make("inv"),
  paymentOptionId: PaymentOptionId.make("opt"),
  network: "base",
  assetCode: "USDC",
  tokenContract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
  decimals: 6,
  amountAtomic: 5_000_000n,
  refundAddress: "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
  watchKey: "0x9858effd232b4033e47d90003d41ec34ecaeda94",
  reference: null,
  payerEmail: null,
  reason: "overpayment",
  status: "completed",
  requiredConfirmations: 10,
  transactionHash: "0xabc",
  outputIndex: 0,
  blockHeight: 123n,
  blockHash: "0xdef",
  confirmations: 10,
  rejectionNote: null,
  addressNote: null,
  verified: true,
  paidFrom: "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
  chosenAt: null,
  requestedAt: new Date("2026-03-02T08:00:00.000Z"),
  sentAt: null,
  completedAt: new Date("2026-03-02T09:00:00.789Z"),
  rejectedAt: null,
  updatedAt: new Date("2026-03-02T09:00:00.789Z")
})

describe("views and their schemas", () => {
  it("a view holds Dates, and its endpoint's schema writes them as ISO 8601 text", () => {
    const view = merchantInvoiceView({ invoice, options: [] }, "https://pay.test", createdAt)
    expect(view.createdAt).toBeInstanceOf(Date)
    expect(view.paymentTiming.payableUntilAt).toBeInstanceOf(Date)
    const encoded = Schema.encodeSync(InvoiceView)(view)
    expect(encoded).toMatchObject({
      createdAt: "2026-03-01T10:00:00.000Z",
      confirmedAt: "2026-03-01T10:20:00.456Z",
      paidOutOfBandAt: null,
      paymentTiming: { mode: "immediate", expiresAfterMinutes: 60, payableUntilAt: "2026-03-01T11:00:00.000Z" }
    })
    expect(Schema.decodeSync(InvoiceView)(encoded)).toEqual(view)
  })

  it("a webhook's invoice is the view's JSON as it was: the spec's field order, timestamps as ISO text", () => {
    const sent = JSON.stringify(webhookInvoiceJson(invoice))
    expect(sent).toBe(JSON.stringify(webhookInvoiceView(invoice)))
    expect(Object.keys(JSON.parse(sent))).toEqual([
      ...WEBHOOK_SHOWN_FIELDS,
      "amountUsd",
      "paymentCoverage",
      "receivedAmountUsd",
      "confirmedAmountUsd",
      "paymentSummary"
    ])
    expect(JSON.parse(sent)).toMatchObject({ id: "inv", confirmedAt: "2026-03-01T10:20:00.456Z", exceptionClosedAt: null, metadata: { order: "A-1" } })
  })

  it("a refund event's refund is the view's JSON as it was", () => {
    const sent = JSON.stringify(webhookRefundJson(refund))
    expect(sent).toBe(JSON.stringify(refundView(refund)))
    expect(JSON.parse(sent)).toMatchObject({ requestedAt: "2026-03-02T08:00:00.000Z", completedAt: "2026-03-02T09:00:00.789Z", blockHeight: "123" })
  })

  it("the CSV export writes the list's JSON form of each summary", () => {
    const summary = Schema.decodeSync(InvoiceSummaryView)({
      id: "inv",
      createdAt: "2026-03-01T10:00:00.000Z",
      status: "confirmed",
      amountUsd: 25,
      paymentCoverage: "overpayment",
      receivedAmountUsd: 30,
      confirmedAmountUsd: 30,
      productName: null,
      merchantReference: "=cmd",
      customerEmail: null,
      payableUntilAt: "2026-03-01T11:00:00.000Z",
      paymentDetectedAt: null,
      confirmedAt: "2026-03-01T10:20:00.456Z",
      paidOutOfBandAt: null,
      exceptionType: null,
      exceptionStatus: null,
      exceptionAction: null,
      exceptionClosedAt: null,
      paymentsSummary: "1 (base USDC)"
    })
    expect(summary.createdAt).toBeInstanceOf(Date)
    expect(csvRow(summary)).toBe(
      "inv,2026-03-01T10:00:00.000Z,confirmed,25,overpayment,30,30,,'=cmd,,2026-03-01T11:00:00.000Z,,2026-03-01T10:20:00.456Z,,,,,,1 (base USDC)\r\n"
    )
  })
})
