import { describe, expect, it } from "vitest"
import { owedMicros, summarize } from "../../src/domain/Coverage.ts"
import { leastConfirmedPayment, remainingAtomic, tally, usdValueOf } from "../../src/domain/Evidence.ts"
import { InvoiceId, MerchantId, PaymentId, PaymentOptionId } from "../../src/domain/Ids.ts"
import { type PaymentRecord } from "../../src/domain/Invoice.ts"
import { Micros } from "../../src/domain/Money.ts"
import { decideInvalidation, decideObservation, decideReorgSettlement, observationProblem } from "../../src/invoices/EvidenceDecision.ts"
import { applyDecision } from "../../src/lifecycle/ApplyDecision.ts"
import { decide } from "../../src/lifecycle/Lifecycle.ts"
import { isLateEvidence } from "../../src/lifecycle/Settlement.ts"
import type { EvidenceOption, EvidenceState } from "../../src/invoices/EvidenceRepo.ts"
import { invoiceRecord } from "../support/InvoiceFixtures.ts"

/**
 * The pure rules of what evidence does and what is still owed, at their edges: one smallest unit
 * short, exact, one over, for 6 (USDC/USDT) and 8 (BTC) decimals. `npm run test:mutation` runs them.
 */

const AMOUNT = Micros.make(100_000_000n) // 100 USD
const at = new Date("2026-01-01T00:10:00.000Z")

const counted = (paymentOptionId: string, amountAtomic: bigint, quotedAtomic: bigint, more: Partial<PaymentRecord> = {}) => ({
  paymentOptionId,
  amountAtomic,
  quotedAtomic,
  confirmedAt: null,
  late: false,
  invalidatedAt: null,
  confirmations: 0,
  ...more
})

// 100 USD in USDC (6 decimals, 1:1) and in BTC at 65,000 USD (8 decimals: 153,847 sats, the quote rounded up).
const ASSETS = [
  { name: "USDC (6 decimals)", quoted: 100_000_000n },
  { name: "BTC (8 decimals)", quoted: 153_847n }
]

describe("what is still owed", () => {
  it("owedMicros: the amount less what was received, never below 0", () => {
    expect(owedMicros(AMOUNT, 99_990_000n)).toBe(10_000n)
    expect(owedMicros(AMOUNT, AMOUNT)).toBe(0n)
    expect(owedMicros(AMOUNT, 100_000_001n)).toBe(0n)
    expect(summarize(AMOUNT, Micros.make(99_990_000n), Micros.make(0n)).remainingMicros).toBe(10_000n)
  })

  for (const { name, quoted } of ASSETS) {
    it(`remainingAtomic through one option (${name}): the quote, then one unit once the payment is one unit short, then nothing`, () => {
      const option = { id: "a", quotedAtomic: quoted }
      expect(remainingAtomic(AMOUNT, option, [])).toBe(quoted)
      expect(remainingAtomic(AMOUNT, option, [counted("a", quoted - 1n, quoted)])).toBe(1n)
      expect(remainingAtomic(AMOUNT, option, [counted("a", quoted, quoted)])).toBe(0n)
      expect(remainingAtomic(AMOUNT, option, [counted("a", quoted + 1n, quoted)])).toBe(0n)
      // an invalidated payment pays nothing
      expect(remainingAtomic(AMOUNT, option, [counted("a", quoted, quoted, { invalidatedAt: at })])).toBe(quoted)
    })

    it(`a payment one unit short (${name}) is partial on the on-time level, the exact quote sufficient`, () => {
      expect(tally(AMOUNT, [counted("a", quoted - 1n, quoted)])).toMatchObject({ onTime: "partial", total: "partial" })
      expect(tally(AMOUNT, [counted("a", quoted, quoted)])).toMatchObject({ onTime: "sufficient", total: "sufficient", receivedMicros: AMOUNT })
      expect(tally(AMOUNT, [counted("a", quoted + 1n, quoted, { confirmedAt: at })])).toMatchObject({ onTime: "confirmed", total: "sufficient" })
    })
  }

  it("remainingAtomic counts what the other options paid, and a cent short there leaves a cent's worth here", () => {
    const option = { id: "b", quotedAtomic: 100_000_000n }
    const other = counted("a", 99_990_000n, 100_000_000n)
    expect(remainingAtomic(AMOUNT, option, [other])).toBe(10_000n)
    expect(remainingAtomic(AMOUNT, option, [counted("a", 100_000_000n, 100_000_000n)])).toBe(0n)
    expect(remainingAtomic(AMOUNT, option, [other, counted("b", 9_999n, 100_000_000n)])).toBe(1n)
    expect(remainingAtomic(Micros.make(0n), option, [])).toBe(0n)
  })
})

describe("confirmations that gate the invoice (decisions.md: the highest k whose payments cover the amount)", () => {
  it("is the highest count whose payments cover the amount, the smallest while all fall short", () => {
    const q = 100_000_000n
    expect(tally(AMOUNT, [counted("a", 60_000_000n, q, { confirmations: 9 }), counted("b", 40_000_000n, q, { confirmations: 3 })]).confirmations).toBe(3)
    expect(tally(AMOUNT, [counted("a", 100_000_000n, q, { confirmations: 12 }), counted("b", 20_000_000n, q, { confirmations: 0 })]).confirmations).toBe(12)
    expect(tally(AMOUNT, [counted("a", 10_000_000n, q, { confirmations: 5 }), counted("b", 10_000_000n, q, { confirmations: 2 })]).confirmations).toBe(2)
    expect(tally(AMOUNT, [counted("a", 100_000_000n, q, { confirmations: 7 })]).confirmations).toBe(7)
    expect(tally(AMOUNT, []).confirmations).toBe(0)
  })

  it("nothing received is level none, on time and in all", () => {
    expect(tally(AMOUNT, [])).toMatchObject({ onTime: "none", total: "none", receivedMicros: 0n })
    expect(tally(AMOUNT, [counted("a", AMOUNT, AMOUNT, { invalidatedAt: at })])).toMatchObject({ onTime: "none", total: "none" })
  })
})

describe("leastConfirmedPayment (accept_late_payment waits for it)", () => {
  const required = () => 12
  const payment = (confirmations: number, late: boolean, invalidatedAt: Date | null = null) => ({ paymentOptionId: PaymentOptionId.make("a"), confirmations, late, invalidatedAt })

  it("names the counted payment furthest from its confirmations, late payments first; none once all are confirmed", () => {
    expect(leastConfirmedPayment([payment(12, true), payment(30, false)], required)).toBeUndefined()
    expect(leastConfirmedPayment([payment(0, true, at)], required)).toBeUndefined()
    expect(leastConfirmedPayment([payment(11, true)], required)).toEqual({ confirmations: 11, required: 12 })
    expect(leastConfirmedPayment([payment(2, false), payment(8, true)], required)).toEqual({ confirmations: 8, required: 12 })
    expect(leastConfirmedPayment([payment(8, true), payment(2, false)], required)).toEqual({ confirmations: 8, required: 12 })
    expect(leastConfirmedPayment([payment(8, true), payment(3, true)], required)).toEqual({ confirmations: 3, required: 12 })
    expect(leastConfirmedPayment([payment(3, true), payment(8, true)], required)).toEqual({ confirmations: 3, required: 12 })
  })

  it("as far from their confirmations (the same share), the earlier payment is named", () => {
    const fourOrTwelve = (paymentOptionId: string) => (paymentOptionId === "a" ? 12 : 4)
    const b = { ...payment(1, true), paymentOptionId: PaymentOptionId.make("b") }
    expect(leastConfirmedPayment([payment(3, true), b], fourOrTwelve)).toEqual({ confirmations: 3, required: 12 })
    expect(leastConfirmedPayment([b, payment(3, true)], fourOrTwelve)).toEqual({ confirmations: 1, required: 4 })
  })
})

describe("what one observation does (EvidenceDecision)", () => {
  const option: EvidenceOption = {
    id: PaymentOptionId.make("opt-a"),
    network: "ethereum",
    assetCode: "USDC",
    decimals: 6,
    quotedAtomic: 100_000_000n,
    requiredConfirmations: 12,
    destinationAddress: "0xoption",
    railType: "wallet_contract"
  } as EvidenceOption
  const invoice = invoiceRecord({ amountMicros: AMOUNT, createdAt: new Date("2026-01-01T00:00:00.000Z"), defaultPaymentOptionId: option.id })
  const observed = { paymentOptionId: option.id, transactionHash: "0xaa", outputIndex: 1, amountAtomic: 100_000_000n, confirmations: 3, observedAt: at }
  const state = (payments: ReadonlyArray<PaymentRecord> = []): EvidenceState => ({ invoice, option, payments, version: "1" })
  const first = decideObservation(state(), { ...observed, blockHeight: 7n, blockHash: "0xb7" }, at)
  if (first._tag !== "Write") throw new Error("a first observation writes")
  const known = first.payment

  it("counts evidence on an expired or voided invoice as late even when first observed before the deadline (decisions.md)", () => {
    expect(at.getTime()).toBeLessThan(invoice.timing.payableUntilAt.getTime())
    expect(isLateEvidence(invoice, at)).toBe(false)
    expect(isLateEvidence({ ...invoice, status: "expired" }, at)).toBe(true)
    expect(isLateEvidence({ ...invoice, status: "voided" }, at)).toBe(true)
  })

  it("refuses no amount, a bad output index, and an unknown option", () => {
    expect(observationProblem({ ...observed, amountAtomic: 0n })).toBe("amount must be positive")
    expect(observationProblem({ ...observed, outputIndex: -1 })).toBe("output index must be a non-negative integer")
    expect(observationProblem({ ...observed, outputIndex: 0.5 })).toBe("output index must be a non-negative integer")
    expect(observationProblem(observed)).toBeUndefined()
    expect(decideObservation(undefined, observed, at)).toEqual({ _tag: "Rejected", reason: "unknown payment option" })
  })

  it("a first observation inserts the payment at the option's address and block, and a forwarder's payment waits for its sweep", () => {
    expect(first.isNew).toBe(true)
    expect(first.write).toMatchObject({ _tag: "InsertPayment", blockHeight: 7n, blockHash: "0xb7", seenInMempool: false, sweepPending: true })
    expect(known).toMatchObject({ destinationAddress: "0xoption", usdMicros: AMOUNT, confirmedAt: null, late: false, outputIndex: 1 })
    const elsewhere = decideObservation(state(), { ...observed, destinationAddress: "0xother", inMempool: true }, at)
    expect(elsewhere).toMatchObject({ write: { seenInMempool: true, blockHeight: null, blockHash: null }, payment: { destinationAddress: "0xother" } })
    const wallet = decideObservation({ ...state(), option: { ...option, railType: "address_transfer" } }, observed, at)
    expect(wallet).toMatchObject({ write: { sweepPending: false } })
  })

  it("keeps the payer's address the watcher read (refunds go back to it), and null when it read none", () => {
    const withPayer = decideObservation(state(), { ...observed, payerAddress: "0xpayer" }, at)
    expect(withPayer).toMatchObject({ _tag: "Write", write: { _tag: "InsertPayment", payerAddress: "0xpayer" } })
    expect(first.write).toMatchObject({ payerAddress: null })
  })

  it("the same network, transaction and output is the same payment; another output or transaction is a new one", () => {
    expect(decideObservation(state([known]), observed, at)).toMatchObject({ _tag: "Unchanged" })
    expect(decideObservation(state([known]), { ...observed, outputIndex: 2 }, at)).toMatchObject({ _tag: "Write", isNew: true })
    expect(decideObservation(state([known]), { ...observed, transactionHash: "0xbb" }, at)).toMatchObject({ _tag: "Write", isNew: true })
    expect(decideObservation(state([{ ...known, network: "base" }]), observed, at)).toMatchObject({ _tag: "Write", isNew: true })
    const matchedElsewhere = decideObservation(state([{ ...known, paymentOptionId: PaymentOptionId.make("opt-b") }]), observed, at)
    expect(matchedElsewhere).toEqual({ _tag: "Rejected", reason: "this transaction output is already matched to another payment option" })
  })

  it("new confirmations update the block or the mempool placement; a mempool sighting of counted evidence changes nothing", () => {
    expect(decideObservation(state([known]), { ...observed, confirmations: 12, blockHeight: 9n, blockHash: "0xb9" }, at)).toMatchObject({
      write: { _tag: "UpdateConfirmations", confirmations: 12, confirmedAt: at, placement: { _tag: "Block", height: 9n, hash: "0xb9" } },
      isNew: false
    })
    expect(decideObservation(state([known]), { ...observed, confirmations: 4 }, at)).toMatchObject({
      write: { placement: { _tag: "Block", height: null, hash: null } }
    })
    expect(decideObservation(state([known]), { ...observed, confirmations: 0, inMempool: true }, at)).toMatchObject({ _tag: "Unchanged" })
    const invalidated = { ...known, invalidatedAt: at, invalidationReason: "reorg" }
    expect(decideObservation(state([invalidated]), { ...observed, confirmations: 0, inMempool: true }, at)).toMatchObject({
      write: { placement: { _tag: "Mempool" } },
      payment: { invalidatedAt: null, invalidationReason: null }
    })
  })

  it("a payment re-included after an invalidation confirms afresh (its earlier confirmation time does not count)", () => {
    const earlier = new Date("2026-01-01T00:05:00.000Z")
    const invalidated = { ...known, confirmations: 12, confirmedAt: earlier, invalidatedAt: at, invalidationReason: "reorg" }
    expect(decideObservation(state([invalidated]), { ...observed, confirmations: 2 }, at)).toMatchObject({ payment: { confirmedAt: null } })
    expect(decideObservation(state([invalidated]), { ...observed, confirmations: 12 }, at)).toMatchObject({ payment: { confirmedAt: at } })
    const stillConfirmed = { ...known, confirmations: 12, confirmedAt: earlier }
    expect(decideObservation(state([stillConfirmed]), { ...observed, confirmations: 13 }, at)).toMatchObject({ payment: { confirmedAt: earlier } })
  })

  it("nothing new answers Unchanged with the invoice and the payment as they are", () => {
    const unchanged = { _tag: "Unchanged", result: { invoice, payment: known } }
    expect(decideObservation(state([known]), { ...observed, confirmations: 0, inMempool: true }, at)).toEqual(unchanged)
    expect(decideObservation(state([known]), observed, at)).toEqual(unchanged)
  })

  it("a known payment at its threshold but not yet stamped confirmed is confirmed by the next report of the same count", () => {
    const atThreshold = { ...known, confirmations: 12, confirmedAt: null }
    expect(decideObservation(state([atThreshold]), { ...observed, confirmations: 12 }, at)).toMatchObject({
      _tag: "Write",
      write: { _tag: "UpdateConfirmations", confirmations: 12, confirmedAt: at },
      payment: { confirmedAt: at }
    })
  })

  it("observedTotalAtomic is what the watcher saw for the evidence, else the amount counted", () => {
    expect(known.observedTotalAtomic).toBe(100_000_000n)
    const split = decideObservation(state(), { ...observed, observedTotalAtomic: 150_000_000n }, at)
    expect(split).toMatchObject({ payment: { amountAtomic: 100_000_000n, observedTotalAtomic: 150_000_000n } })
  })

  describe("an invalidation", () => {
    const confirmedPayment = { ...known, confirmations: 12, confirmedAt: at }
    const confirmedInvoice = { ...invoice, status: "confirmed" as const, confirmedAt: at, paymentDetectedAt: at }
    const reorg = { network: "ethereum", transactionHash: "0xaa", outputIndex: 1, reason: "chain_reorganization" }
    const later = new Date("2026-01-01T00:20:00.000Z")

    it("of a payment already invalidated changes nothing", () => {
      const invalidated = { ...known, invalidatedAt: at, invalidationReason: "reorg" }
      const evidence = { invoice, payments: [invalidated], payment: invalidated }
      expect(decideInvalidation(evidence, { ...reorg, reorgPoint: 7n }, later)).toEqual({ _tag: "Unchanged", result: { invoice, payment: invalidated } })
    })

    it("of a confirmed invoice's payment in a watcher's reorganisation waits for the reorganisation to settle", () => {
      const decision = decideInvalidation({ invoice: confirmedInvoice, payments: [confirmedPayment], payment: confirmedPayment }, { ...reorg, reorgPoint: 7n }, later)
      expect(decision).toMatchObject({ _tag: "Write", write: { _tag: "InvalidatePayment", reorgPoint: 7n }, invoice: { status: "confirmed", exceptionStatus: null }, events: [] })
    })

    it("of a confirmed invoice's payment without a reorg point (simulator, dropped mempool transaction) is judged at once", () => {
      const decision = decideInvalidation({ invoice: confirmedInvoice, payments: [confirmedPayment], payment: confirmedPayment }, reorg, later)
      expect(decision).toMatchObject({
        _tag: "Write",
        write: { reorgPoint: null },
        invoice: { status: "confirmed", exceptionType: "partial_payment", exceptionStatus: "open" },
        events: [{ event: "invoice_exception_opened" }]
      })
    })

    it("of an invoice not yet confirmed is judged at once, reorg point or not", () => {
      const decision = decideInvalidation({ invoice: { ...invoice, status: "payment_detected" }, payments: [known], payment: known }, { ...reorg, reorgPoint: 7n }, later)
      expect(decision).toMatchObject({ _tag: "Write", write: { reorgPoint: null }, invoice: { status: "awaiting_payment", receivedMicros: 0n } })
    })

    it("once the reorganisation has settled, a confirmed invoice still short opens a partial_payment exception", () => {
      const invalidated = { ...confirmedPayment, invalidatedAt: at, invalidationReason: "chain_reorganization" }
      const decision = decideReorgSettlement({ invoice: confirmedInvoice, payments: [invalidated], payment: invalidated }, later)
      expect(decision).toMatchObject({
        _tag: "Write",
        write: { _tag: "SettleReorg", paymentId: known.id },
        isNew: false,
        invoice: { status: "confirmed", exceptionType: "partial_payment", exceptionStatus: "open" },
        events: [{ event: "invoice_exception_opened" }]
      })
    })
  })

  it("values a payment at its option's quote (rounded down)", () => {
    expect(usdValueOf(99_999_999n, 100_000_000n, AMOUNT)).toBe(99_999_999n)
    expect(usdValueOf(1n, 153_847n, AMOUNT)).toBe(649n)
  })

  it("values a payment at a zero quote at nothing (no division by zero)", () => {
    expect(usdValueOf(1n, 0n, AMOUNT)).toBe(0n)
    expect(usdValueOf(0n, 0n, AMOUNT)).toBe(0n)
  })

  describe("two payments observed at the same time (ties by payment id, as the database reads them back)", () => {
    // InvoiceRepo reads payments `ORDER BY observed_at, id`: the invoice's last transaction and last
    // option must name the payment that read lists last, whatever order the decision got them in.
    const lower = { ...known, id: PaymentId.make("00000000-0000-4000-8000-000000000001"), transactionHash: "0x01", paymentOptionId: PaymentOptionId.make("opt-a") }
    const higher = { ...known, id: PaymentId.make("00000000-0000-4000-8000-000000000002"), transactionHash: "0x02", paymentOptionId: PaymentOptionId.make("opt-b"), outputIndex: 2 }
    const last = { lastTransactionHash: "0x02", lastPaymentOptionId: "opt-b", lastPaymentObservedAt: at }

    it.each([["lower id first", [lower, higher]], ["higher id first", [higher, lower]]] as const)("%s: the higher id is the last", (_, payments) => {
      expect(decideReorgSettlement({ invoice, payments, payment: lower }, at)).toMatchObject({ _tag: "Write", invoice: last })
      expect(decideReorgSettlement({ invoice, payments, payment: higher }, at)).toMatchObject({ _tag: "Write", invoice: last })
    })

    it.each([["lower id first", [lower, higher]], ["higher id first", [higher, lower]]] as const)("%s: a new confirmation keeps the higher id last", (_, payments) => {
      const again = { ...observed, transactionHash: "0x01", outputIndex: 1, confirmations: 12 }
      expect(decideObservation(state(payments), again, at)).toMatchObject({ _tag: "Write", invoice: last })
    })
  })
})

describe("applying a lifecycle decision", () => {
  it("writes exactly the events the decision emits, for the invoice and its merchant", () => {
    const invoice = { id: InvoiceId.make("inv"), merchantId: MerchantId.make("m"), status: "awaiting_payment", exceptionType: null, exceptionStatus: null }
    const decision = decide({ status: "awaiting_payment", exceptionType: null, exceptionStatus: null }, { type: "VOID" })!
    const applied = applyDecision(invoice as unknown as Parameters<typeof applyDecision>[0], decision, { now: at })
    expect(applied.events).toEqual([{ invoiceId: "inv", merchantId: "m", event: "invoice_voided" }])
    expect(applied.invoice.status).toBe("voided")
  })
})
