import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { coverageOf, PaymentCoverage, summarize } from "../../src/domain/Coverage.ts"
import { type InvoiceRecord } from "../../src/domain/Invoice.ts"
import { Micros } from "../../src/domain/Money.ts"
import { applyEvents, settle } from "../../src/lifecycle/Settlement.ts"
import { invoiceRecord } from "../support/InvoiceFixtures.ts"

/**
 * Edges of the coverage vocabulary and of a settlement: the spec's four paymentCoverage values
 * (and nothing else), a settlement with no evidence at all, and the payable deadline's instant
 * (spec: a payment observed at or before payableUntilAt is on time, so the deadline has not
 * passed at that instant). `npm run test:mutation` runs it.
 */

const AMOUNT = Micros.make(100_000_000n)
const CREATED = new Date("2026-01-01T00:00:00.000Z")

const invoice: InvoiceRecord = invoiceRecord({ amountMicros: AMOUNT, createdAt: CREATED })
const deadline = invoice.timing.payableUntilAt

describe("paymentCoverage (spec: no_payment, partial_payment, exact_payment, overpayment)", () => {
  it("the schema accepts exactly the spec's four values", () => {
    for (const value of ["no_payment", "partial_payment", "exact_payment", "overpayment"]) expect(Schema.is(PaymentCoverage)(value)).toBe(true)
    for (const value of ["", "paid", "Overpayment", null]) expect(Schema.is(PaymentCoverage)(value)).toBe(false)
  })

  it("coverageOf and summarize at the edges: nothing, a micro short, exact, a micro over", () => {
    expect([0n, AMOUNT - 1n, AMOUNT, AMOUNT + 1n].map((received) => coverageOf(AMOUNT, received))).toEqual(["no_payment", "partial_payment", "exact_payment", "overpayment"])
    expect(summarize(AMOUNT, Micros.make(AMOUNT + 1n), Micros.make(5n))).toEqual({
      paymentCoverage: "overpayment",
      receivedMicros: AMOUNT + 1n,
      confirmedMicros: 5n,
      remainingMicros: 0n,
      overpaymentMicros: 1n
    })
    expect(summarize(AMOUNT, Micros.make(AMOUNT - 1n), Micros.make(0n))).toMatchObject({ remainingMicros: 1n, overpaymentMicros: 0n })
  })
})

describe("settlement edges", () => {
  it("applying no events changes nothing and writes no event", () => {
    expect(applyEvents(invoice, [], deadline)).toEqual({ invoice, events: [] })
  })

  it("an event the machine does not take writes no event", () => {
    expect(applyEvents(invoice, [{ type: "REORG_SETTLED", total: "none" }], deadline)).toEqual({ invoice, events: [] })
  })

  it("a settlement without any evidence names no last payment", () => {
    const settled = settle(invoice, [], CREATED, { late: false })
    expect(settled.invoice).toMatchObject({ status: "awaiting_payment", lastTransactionHash: null, lastPaymentOptionId: null, lastPaymentObservedAt: null, receivedMicros: 0n })
    expect(settled.events).toEqual([])
  })

  it("at the payable deadline's instant the deadline has not passed; a millisecond later the invoice expires", () => {
    const atDeadline = settle(invoice, [], deadline, { late: false })
    expect(atDeadline.invoice.status).toBe("awaiting_payment")
    expect(atDeadline.events).toEqual([])
    const after = settle(invoice, [], new Date(deadline.getTime() + 1), { late: false })
    expect(after.invoice.status).toBe("expired")
    expect(after.events.map((each) => each.event)).toEqual(["invoice_expired"])
  })
})
