import { describe, expect, it } from "vitest"
import type { RefundStatus } from "../../src/refunds/Refund.ts"
import {
  type CountedRefund,
  type RefundableInvoice,
  type RefundableOption,
  type RefundablePayment,
  refundable,
  refundReasonOf,
  refundsToReject,
  requestable
} from "../../src/refunds/Refundable.ts"

/**
 * The refund rule (src/refunds/Refundable.ts, docs/refunds.md "What is refundable") at its edges,
 * with expected amounts worked out by hand from the documented rule: the invoice keeps its amount,
 * taken from the options in the order of their first payment (ties by option id), each option's
 * share converted at its quote and rounded up, never more than it received; close_unpaid keeps
 * nothing; only confirmed, valid payments count; unrejected refunds are deducted.
 * `npm run test:mutation` runs it.
 */

const AMOUNT = 100_000_000n // 100 USD in micros
const USDC = 100_000_000n // the quote of 100 USD in USDC (6 decimals, one unit per micro)
const BTC = 153_847n // the quote of 100 USD in sats at 65,000 USD per BTC (rounded up)

type State = Pick<RefundableInvoice, "status" | "exceptionStatus" | "exceptionAction">
const CONFIRMED: State = { status: "confirmed", exceptionStatus: null, exceptionAction: null }
const CLOSED_UNPAID: State = { status: "expired", exceptionStatus: "closed", exceptionAction: "close_unpaid" }
const ACCEPTED_LATE: State = { status: "confirmed", exceptionStatus: "closed", exceptionAction: "accept_late_payment" }
const OPEN_EXCEPTION: State = { status: "expired", exceptionStatus: "open", exceptionAction: null }

const invoiceOf = (state: State, amountMicros = AMOUNT): RefundableInvoice => ({ amountMicros, ...state })
const option = (id: string, quotedAtomic: bigint): RefundableOption => ({ id, quotedAtomic })
const A = option("opt-a", USDC)
const B = option("opt-b", BTC)
const C = option("opt-c", USDC)

/** The USD value of a payment at its option's quote, rounded down (the evidence rule, Evidence.usdValueOf). */
const usdOf = (atomic: bigint, quoted: bigint) => (atomic * AMOUNT) / quoted
const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second))

/** A confirmed, valid payment observed at `second`. */
const paid = (of: RefundableOption, amountAtomic: bigint, second: number, more: Partial<RefundablePayment> = {}): RefundablePayment => ({
  paymentOptionId: of.id,
  amountAtomic,
  usdMicros: usdOf(amountAtomic, of.quotedAtomic),
  observedAt: at(second),
  confirmedAt: at(second + 60),
  invalidatedAt: null,
  ...more
})
const unconfirmed = { confirmedAt: null }
const invalidated = { invalidatedAt: at(500) }

/** A refund; a `requested` one the merchant chose (as every refund was before issue #52). */
const refund = (of: RefundableOption, amountAtomic: bigint, status: RefundStatus, second = 100, id = `${of.id}-${status}-${second}`) => ({
  id,
  paymentOptionId: of.id,
  amountAtomic,
  status,
  chosenAt: status === "requested" ? at(second) : null,
  requestedAt: at(second)
})

/** A pending request the merchant has not chosen: one of the option's side-by-side candidates (issue #52). */
const candidate = (of: RefundableOption, amountAtomic: bigint, second = 100) => ({
  ...refund(of, amountAtomic, "requested", second, `${of.id}-candidate-${second}`),
  chosenAt: null
})

const entry = (of: RefundableOption, receivedAtomic: bigint, keptAtomic: bigint, claimedAtomic: bigint, refundableAtomic: bigint, reason = "overpayment") => ({
  paymentOptionId: of.id,
  receivedAtomic,
  keptAtomic,
  claimedAtomic,
  refundableAtomic,
  reason
})

describe("refundReasonOf: why an invoice refunds anything", () => {
  const over = AMOUNT + 1n
  const cases: ReadonlyArray<readonly [string, State, bigint, string | undefined]> = [
    ["confirmed and paid a micro over its amount: overpayment", CONFIRMED, over, "overpayment"],
    ["confirmed and paid exactly: nothing", CONFIRMED, AMOUNT, undefined],
    ["confirmed with an open exception (the merchant has not decided): nothing", { ...CONFIRMED, exceptionStatus: "open" }, over, undefined],
    ["closed unpaid: close_unpaid, whatever was paid", CLOSED_UNPAID, 1n, "close_unpaid"],
    ["closed unpaid with nothing confirmed: close_unpaid (the amounts decide what is listed)", CLOSED_UNPAID, 0n, "close_unpaid"],
    ["closed with accept_late_payment, confirmed, overpaid: overpayment", ACCEPTED_LATE, over, "overpayment"],
    ["closed with accept_late_payment while not confirmed: it keeps its amount all the same", { ...ACCEPTED_LATE, status: "expired" }, over, "overpayment"],
    ["closed with accept_late_payment and paid exactly: nothing", ACCEPTED_LATE, AMOUNT, undefined],
    ["expired, paid out of band: nothing", { status: "expired", exceptionStatus: "closed", exceptionAction: "mark_paid_out_of_band" }, over, undefined],
    ["expired without an exception: nothing", { status: "expired", exceptionStatus: null, exceptionAction: null }, over, undefined],
    ["partially paid: nothing", { status: "partially_paid", exceptionStatus: null, exceptionAction: null }, over, undefined],
    ["payment detected (not confirmed): nothing", { status: "payment_detected", exceptionStatus: null, exceptionAction: null }, over, undefined],
    ["an open exception that had been closed unpaid: nothing", { ...CLOSED_UNPAID, exceptionStatus: "open" }, over, undefined],
    // Only a closed exception's action counts (an action without a closed exception decides nothing).
    ["an action close_unpaid without a closed exception: nothing", { ...CLOSED_UNPAID, exceptionStatus: null }, over, undefined],
    ["an action accept_late_payment without a closed exception: nothing", { ...ACCEPTED_LATE, status: "expired", exceptionStatus: null }, over, undefined]
  ]
  for (const [title, state, confirmedUsd, reason] of cases) {
    it(title, () => expect(refundReasonOf(invoiceOf(state), confirmedUsd)).toBe(reason))
  }
})

describe("refundable: what each option received, keeps and may refund", () => {
  it("one option overpaid in two payments: the invoice keeps its amount, the rest is refundable", () => {
    expect(refundable(invoiceOf(CONFIRMED), [A], [paid(A, 70_000_000n, 1), paid(A, 50_000_000n, 2)], [])).toEqual([
      entry(A, 120_000_000n, 100_000_000n, 0n, 20_000_000n)
    ])
  })

  it("unconfirmed and invalidated payments count neither as received nor toward the overpayment", () => {
    const payments = [
      paid(A, 70_000_000n, 1),
      paid(A, 50_000_000n, 2),
      paid(A, 30_000_000n, 3, unconfirmed),
      paid(A, 40_000_000n, 4, invalidated),
      paid(A, 40_000_000n, 5, { ...unconfirmed, ...invalidated }),
      // an option paid only by payments that do not count is not listed
      paid(C, 90_000_000n, 6, unconfirmed),
      paid(C, 90_000_000n, 7, invalidated)
    ]
    expect(refundable(invoiceOf(CONFIRMED), [A, C], payments, [])).toEqual([entry(A, 120_000_000n, 100_000_000n, 0n, 20_000_000n)])
    // Without the confirmed ones, the rest would overpay: still nothing.
    expect(refundable(invoiceOf(CONFIRMED), [A, C], payments.slice(2), [])).toEqual([])
  })

  it("an overpayment that is not confirmed yet refunds nothing; paid exactly refunds nothing", () => {
    expect(refundable(invoiceOf(CONFIRMED), [A], [paid(A, 100_000_000n, 1), paid(A, 20_000_000n, 2, unconfirmed)], [])).toEqual([])
    expect(refundable(invoiceOf(CONFIRMED), [A], [paid(A, 100_000_000n, 1)], [])).toEqual([])
  })

  it("an open exception refunds nothing; an invoice not confirmed refunds nothing", () => {
    expect(refundable(invoiceOf(OPEN_EXCEPTION), [A], [paid(A, 150_000_000n, 1)], [])).toEqual([])
    expect(refundable(invoiceOf({ ...CONFIRMED, exceptionStatus: "open" }), [A], [paid(A, 150_000_000n, 1)], [])).toEqual([])
    expect(refundable(invoiceOf({ status: "partially_paid", exceptionStatus: null, exceptionAction: null }), [A], [paid(A, 150_000_000n, 1)], [])).toEqual([])
  })

  it("closed unpaid keeps nothing: everything each option received is refundable", () => {
    const payments = [paid(B, 50_000n, 1), paid(A, 30_000_000n, 2), paid(A, 5_000_000n, 3, unconfirmed)]
    expect(refundable(invoiceOf(CLOSED_UNPAID), [A, B], payments, [])).toEqual([
      entry(B, 50_000n, 0n, 0n, 50_000n, "close_unpaid"),
      entry(A, 30_000_000n, 0n, 0n, 30_000_000n, "close_unpaid")
    ])
  })

  it("accept_late_payment keeps the invoice's amount and refunds the rest", () => {
    expect(refundable(invoiceOf(ACCEPTED_LATE), [A], [paid(A, 130_000_000n, 1)], [])).toEqual([entry(A, 130_000_000n, 100_000_000n, 0n, 30_000_000n)])
    expect(refundable(invoiceOf({ ...ACCEPTED_LATE, status: "expired" }), [A], [paid(A, 130_000_000n, 1)], [])).toEqual([
      entry(A, 130_000_000n, 100_000_000n, 0n, 30_000_000n)
    ])
  })

  it("the amount kept is taken from the options in the order of their first payment, each keeping at most its worth", () => {
    // A paid 60 USD first: it keeps all of it; C keeps the 40 still owed and refunds 20.
    const payments = [paid(C, 60_000_000n, 2), paid(A, 60_000_000n, 1)]
    expect(refundable(invoiceOf(CONFIRMED), [C, A], payments, [])).toEqual([
      entry(A, 60_000_000n, 60_000_000n, 0n, 0n),
      entry(C, 60_000_000n, 40_000_000n, 0n, 20_000_000n)
    ])
    // C first: the other way round.
    const cFirst = [paid(C, 60_000_000n, 1), paid(A, 60_000_000n, 2)]
    expect(refundable(invoiceOf(CONFIRMED), [A, C], cFirst, [])).toEqual([
      entry(C, 60_000_000n, 60_000_000n, 0n, 0n),
      entry(A, 60_000_000n, 40_000_000n, 0n, 20_000_000n)
    ])
  })

  it("an option's share is converted at its own quote and rounded up in the merchant's favour", () => {
    // BTC paid 76,924 sats first (worth 50,000,324 micros, rounded down): it keeps all of that,
    // ceil(50,000,324 × 153,847 / 100,000,000) = 76,924 sats (rounding up gives back the sat a
    // floor would refund). USDC keeps the 49,999,676 micros still owed and refunds the rest.
    const payments = [paid(B, 76_924n, 1), paid(A, 60_000_000n, 2)]
    expect(refundable(invoiceOf(CONFIRMED), [A, B], payments, [])).toEqual([
      entry(B, 76_924n, 76_924n, 0n, 0n),
      entry(A, 60_000_000n, 49_999_676n, 0n, 10_000_324n)
    ])
    // USDC first (30 USD): BTC keeps 70 USD, ceil(70,000,000 × 153,847 / 100,000,000) = 107,693 sats (a floor would keep 107,692).
    const usdcFirst = [paid(A, 30_000_000n, 1), paid(B, 200_000n, 2)]
    expect(refundable(invoiceOf(CONFIRMED), [A, B], usdcFirst, [])).toEqual([
      entry(A, 30_000_000n, 30_000_000n, 0n, 0n),
      entry(B, 200_000n, 107_693n, 0n, 92_307n)
    ])
  })

  it("an option never keeps more than it received, even when its USD value converts back to more", () => {
    // An option quoting 3 units for 100 USD, paid 1 unit recorded as 40 USD: its share converts
    // back to ceil(40 × 3 / 100) = 2 units, capped at the 1 received.
    const odd = option("opt-odd", 3n)
    const payments = [paid(odd, 1n, 1, { usdMicros: 40_000_000n }), paid(A, 80_000_000n, 2)]
    expect(refundable(invoiceOf(CONFIRMED), [odd, A], payments, [])).toEqual([
      entry(odd, 1n, 1n, 0n, 0n),
      entry(A, 80_000_000n, 60_000_000n, 0n, 20_000_000n)
    ])
  })

  it("the order is each option's first payment, whatever became of it, and whatever the order of the list", () => {
    // A's first payment (second 1) was never confirmed, its later one (second 5) was; C paid at second 3.
    const order = (payments: ReadonlyArray<RefundablePayment>) => refundable(invoiceOf(CLOSED_UNPAID), [C, A], payments, []).map((each) => each.paymentOptionId)
    expect(order([paid(A, 1n, 1, unconfirmed), paid(C, 1n, 3), paid(A, 1n, 5)])).toEqual(["opt-a", "opt-c"])
    expect(order([paid(A, 1n, 5), paid(C, 1n, 3), paid(A, 1n, 1, invalidated)])).toEqual(["opt-a", "opt-c"])
    expect(order([paid(A, 1n, 1), paid(C, 1n, 3), paid(A, 1n, 5)])).toEqual(["opt-a", "opt-c"])
    expect(order([paid(A, 1n, 5), paid(C, 1n, 3)])).toEqual(["opt-c", "opt-a"])
    expect(order([paid(C, 1n, 3), paid(A, 1n, 5)])).toEqual(["opt-c", "opt-a"])
    // Three options, listed in neither id nor payment order.
    const three = [paid(B, 1n, 2), paid(A, 1n, 3), paid(C, 1n, 1)]
    expect(refundable(invoiceOf(CLOSED_UNPAID), [A, B, C], three, []).map((each) => each.paymentOptionId)).toEqual(["opt-c", "opt-b", "opt-a"])
    expect(refundable(invoiceOf(CLOSED_UNPAID), [C, A, B], three, []).map((each) => each.paymentOptionId)).toEqual(["opt-c", "opt-b", "opt-a"])
  })

  it("options first paid at the same moment are taken in the order of their ids", () => {
    const order = (options: ReadonlyArray<RefundableOption>, payments: ReadonlyArray<RefundablePayment>) =>
      refundable(invoiceOf(CONFIRMED), options, payments, []).map((each) => [each.paymentOptionId, each.keptAtomic])
    const tied = [paid(C, 60_000_000n, 1), paid(A, 60_000_000n, 1)]
    const expected = [["opt-a", 60_000_000n], ["opt-c", 40_000_000n]]
    expect(order([A, C], tied)).toEqual(expected)
    expect(order([C, A], tied)).toEqual(expected)
    expect(order([C, A], [...tied].reverse())).toEqual(expected)
    // Three tied, listed backwards and shuffled.
    const three = [paid(A, 1n, 1), paid(B, 1n, 1), paid(C, 1n, 1)]
    for (const options of [[C, B, A], [B, C, A], [A, C, B], [A, B, C]]) {
      expect(refundable(invoiceOf(CLOSED_UNPAID), options, three, []).map((each) => each.paymentOptionId)).toEqual(["opt-a", "opt-b", "opt-c"])
    }
  })

  it("an invoice amount of 0 keeps nothing (no division by zero)", () => {
    expect(refundable(invoiceOf(CLOSED_UNPAID, 0n), [A], [paid(A, 5n, 1, { usdMicros: 0n })], [])).toEqual([entry(A, 5n, 0n, 0n, 5n, "close_unpaid")])
  })

  describe("refunds already made on the option are deducted, rejected ones are not", () => {
    const payments = [paid(A, 120_000_000n, 1), paid(C, 30_000_000n, 2)]
    const cases: ReadonlyArray<readonly [string, ReadonlyArray<CountedRefund>, bigint, bigint]> = [
      ["none", [], 0n, 20_000_000n],
      ["a requested one", [refund(A, 20_000_000n, "requested")], 20_000_000n, 0n],
      ["a sent one (the money has left)", [refund(A, 5_000_000n, "sent")], 5_000_000n, 15_000_000n],
      ["a completed one", [refund(A, 7_000_000n, "completed")], 7_000_000n, 13_000_000n],
      ["a rejected one is not deducted", [refund(A, 20_000_000n, "rejected")], 0n, 20_000_000n],
      ["pending candidates are not deducted: another request stands beside them (issue #52)", [candidate(A, 20_000_000n, 1), candidate(A, 20_000_000n, 2)], 0n, 20_000_000n],
      ["another option's refund is not this option's", [refund(C, 30_000_000n, "requested")], 0n, 20_000_000n],
      ["several, of every status", [refund(A, 4_000_000n, "sent"), refund(A, 6_000_000n, "completed"), refund(A, 9_000_000n, "rejected"), refund(A, 1_000_000n, "requested")],
        11_000_000n, 9_000_000n],
      // After an invalidation a sent refund may claim more than is left: nothing, never a negative amount.
      ["claims beyond what is left leave 0", [refund(A, 25_000_000n, "sent")], 25_000_000n, 0n]
    ]
    for (const [title, refunds, claimed, left] of cases) {
      it(title, () => {
        const [first] = refundable(invoiceOf(CONFIRMED), [A, C], payments, refunds)
        expect(first).toEqual(entry(A, 120_000_000n, 100_000_000n, claimed, left))
      })
    }
  })
})

describe("refundsToReject: requested refunds that no longer fit after the evidence changed", () => {
  const overpaid = [paid(A, 70_000_000n, 1), paid(A, 50_000_000n, 2)] // A may refund 20 USDC
  const reorged = [paid(A, 70_000_000n, 1), paid(A, 50_000_000n, 2, invalidated)] // A may refund nothing

  const cases: ReadonlyArray<readonly [string, State, ReadonlyArray<RefundablePayment>, ReadonlyArray<ReturnType<typeof refund>>, ReadonlyArray<string>]> = [
    ["a refund of exactly what may be refunded stays", CONFIRMED, overpaid, [refund(A, 20_000_000n, "requested")], []],
    ["one unit more is rejected (the invoice keeps its amount)", CONFIRMED, overpaid, [refund(A, 20_000_001n, "requested")], ["opt-a-requested-100"]],
    ["a payment invalidated under a requested refund: rejected", CONFIRMED, reorged, [refund(A, 20_000_000n, "requested")], ["opt-a-requested-100"]],
    ["sent and completed refunds are never rejected", CONFIRMED, reorged, [refund(A, 15_000_000n, "sent", 10), refund(A, 5_000_000n, "completed", 20)], []],
    [
      "beside a sent refund, the requested one goes",
      CONFIRMED,
      overpaid,
      [refund(A, 15_000_000n, "sent", 10), refund(A, 10_000_000n, "requested", 5)],
      ["opt-a-requested-5"]
    ],
    ["a rejected refund claims nothing", CONFIRMED, overpaid, [refund(A, 20_000_000n, "rejected", 10), refund(A, 20_000_000n, "requested", 20)], []],
    [
      "each option is judged on its own refunds",
      CONFIRMED,
      [...overpaid, paid(C, 30_000_000n, 3)],
      [refund(A, 20_000_000n, "requested", 10), refund(C, 30_000_000n, "requested", 20)],
      []
    ],
    [
      "an option without confirmed payments may refund nothing",
      CONFIRMED,
      [...overpaid, paid(C, 30_000_000n, 3, invalidated)],
      [refund(A, 20_000_000n, "requested", 10), refund(C, 30_000_000n, "requested", 20)],
      ["opt-c-requested-20"]
    ],
    [
      "newest first, only as many as needed",
      CONFIRMED,
      overpaid,
      [refund(A, 10_000_000n, "requested", 20), refund(A, 15_000_000n, "requested", 10), refund(A, 5_000_000n, "requested", 30)],
      ["opt-a-requested-30", "opt-a-requested-20"]
    ],
    [
      "closed unpaid, then the late payment accepted: what was granted on the kept money goes",
      ACCEPTED_LATE,
      overpaid,
      [refund(A, 120_000_000n, "requested")],
      ["opt-a-requested-100"]
    ],
    ["closed unpaid: everything received may be refunded", CLOSED_UNPAID, overpaid, [refund(A, 120_000_000n, "requested")], []]
  ]
  for (const [title, state, payments, refunds, rejected] of cases) {
    it(title, () => expect(refundsToReject(invoiceOf(state), [A, C], payments, refunds).map((each) => each.id)).toEqual(rejected))
  }

  it("pending candidates claim the money once: each that no longer fits is rejected, whatever their number (issue #52)", () => {
    const side = [candidate(A, 20_000_000n, 1), candidate(A, 20_000_000n, 2)]
    expect(refundsToReject(invoiceOf(CONFIRMED), [A], overpaid, side)).toEqual([])
    expect(refundsToReject(invoiceOf(CONFIRMED), [A], overpaid, [refund(A, 5_000_000n, "sent"), ...side])).toEqual(side)
  })

  it("each side-by-side candidate is judged on its own amount, in either order (issue #52)", () => {
    // 20 USD refundable on A: a 25 candidate no longer fits, a 15 one does.
    const small = candidate(A, 15_000_000n, 1)
    const large = candidate(A, 25_000_000n, 2)
    expect(refundsToReject(invoiceOf(CONFIRMED), [A], overpaid, [small, large])).toEqual([large])
    expect(refundsToReject(invoiceOf(CONFIRMED), [A], overpaid, [large, small])).toEqual([large])
    // A rejected refund claims nothing: beside it, the candidates are judged the same way.
    const rejectedOne = refund(A, 20_000_000n, "rejected")
    expect(refundsToReject(invoiceOf(CONFIRMED), [A], overpaid, [rejectedOne, small, large])).toEqual([large])
  })

  it("returns the refunds themselves", () => {
    const requested = refund(A, 20_000_000n, "requested")
    expect(refundsToReject(invoiceOf(CONFIRMED), [A], reorged, [requested])).toEqual([requested])
    expect(refundsToReject(invoiceOf(CONFIRMED), [A], overpaid, [])).toEqual([])
  })
})

describe("requestable: what the payer can ask for now", () => {
  const payments = [paid(A, 60_000_000n, 1), paid(C, 60_000_000n, 2), paid(B, 50_000n, 3)]
  // A keeps all of its 60 USD, C keeps 40 and may refund 20, B keeps nothing and may refund all.
  const ids = (refunds: ReadonlyArray<CountedRefund>) =>
    requestable(invoiceOf(CONFIRMED), [A, B, C], payments, refunds).map((each) => [each.paymentOptionId, each.refundableAtomic])

  it("lists the options with something refundable, not those that keep everything", () => {
    expect(ids([])).toEqual([["opt-c", 20_000_000n], ["opt-b", 50_000n]])
  })

  it("one request per option, ever: an option with a refund of any status is not listed again", () => {
    for (const status of ["requested", "sent", "completed", "rejected"] as const) {
      expect(ids([refund(C, 1n, status)])).toEqual([["opt-b", 50_000n]])
    }
    expect(ids([refund(B, 50_000n, "rejected"), refund(C, 20_000_000n, "requested")])).toEqual([])
  })

  it("an option with pending candidates stays open to another request, for the same amount (issue #52)", () => {
    expect(ids([candidate(C, 20_000_000n, 1), candidate(C, 20_000_000n, 2)])).toEqual([["opt-c", 20_000_000n], ["opt-b", 50_000n]])
    // Chosen, or every candidate rejected: closed to requests.
    expect(ids([candidate(C, 20_000_000n, 1), refund(C, 20_000_000n, "requested", 2)])).toEqual([["opt-b", 50_000n]])
    expect(ids([{ ...candidate(C, 20_000_000n), status: "rejected" as const }])).toEqual([["opt-b", 50_000n]])
    // One candidate rejected, another still pending: the option stays open.
    expect(ids([{ ...candidate(C, 20_000_000n, 1), status: "rejected" as const }, candidate(C, 20_000_000n, 2)]))
      .toEqual([["opt-c", 20_000_000n], ["opt-b", 50_000n]])
  })

  it("the entries are refundable's, with the refunds deducted", () => {
    expect(requestable(invoiceOf(CONFIRMED), [A, B, C], payments, [refund(C, 5_000_000n, "sent")])).toEqual([entry(B, 50_000n, 0n, 0n, 50_000n)])
    expect(requestable(invoiceOf(OPEN_EXCEPTION), [A, B, C], payments, [])).toEqual([])
  })
})
