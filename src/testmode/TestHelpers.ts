import { Clock, Context, Data, Effect, Layer, Option } from "effect"
import { InvoiceNotFound } from "../domain/Errors.ts"
import type { MerchantId } from "../domain/Ids.ts"
import type { InvoiceParts, PaymentRecord } from "../domain/Invoice.ts"
import { parseAtomic } from "../domain/Money.ts"
import { statusesAccepting } from "../lifecycle/Lifecycle.ts"
import { applyEvents } from "../lifecycle/Settlement.ts"
import { InvoiceChanges } from "../invoices/InvoiceChanges.ts"
import { InvoiceRepo } from "../invoices/InvoiceRepo.ts"
import { Invoices } from "../invoices/Invoices.ts"
import { type EvidenceResult, PaymentEvidence } from "../invoices/PaymentEvidence.ts"

/** paymentOptionId names no option of the invoice. */
export class HelperOptionNotFound extends Data.TaggedError("HelperOptionNotFound")<{}> {}
/** No payment of the invoice has that transaction hash. */
export class HelperPaymentNotFound extends Data.TaggedError("HelperPaymentNotFound")<{}> {}
/** The amount is not a positive amount in the option's asset with at most its decimals. */
export class HelperInvalidAmount extends Data.TaggedError("HelperInvalidAmount")<{ readonly decimals: number }> {}
/** A test payment may not take a real chain transaction's hash (it would claim that transaction's identity from a live payment). */
export class HelperChainHashRefused extends Data.TaggedError("HelperChainHashRefused")<{}> {}
/** The entry point refused the evidence (the reason says why). */
export class HelperEvidenceRejected extends Data.TaggedError("HelperEvidenceRejected")<{ readonly reason: string }> {}

export type TestHelperError =
  | InvoiceNotFound
  | HelperOptionNotFound
  | HelperPaymentNotFound
  | HelperInvalidAmount
  | HelperChainHashRefused
  | HelperEvidenceRejected

/**
 * Which invoices a caller may drive: the merchant's (when named) of the mode (when named). The
 * test helpers pass `{ merchantId, livemode: false }`, the payer page's public simulation
 * `{ livemode: false }`, the development simulator `{ merchantId }`.
 */
export interface HelperScope {
  readonly merchantId?: MerchantId | undefined
  readonly livemode?: boolean | undefined
}

export interface PayInput {
  readonly paymentOptionId: string
  /** In the option's asset units, as decimal text ("12.5"). */
  readonly amount: string
  readonly confirmations?: number | undefined
  /** Generated (`test_…`) when absent. */
  readonly transactionHash?: string | undefined
  /** When the payment was seen: now when absent; true: after the deadline; false: at the latest at the deadline. */
  readonly late?: boolean | undefined
  readonly payerAddress?: string | undefined
}

/** What a helper answers: the payment it fed and the invoice as it is afterwards. */
export interface HelperResult {
  readonly payment: PaymentRecord
  readonly parts: InvoiceParts
}

const EXPIRABLE = statusesAccepting({ type: "DEADLINE_PASSED" })

/** Shapes of real transaction hashes: EVM (0x + 64 hex), bitcoin (64 hex) and Solana signatures (base58). */
const CHAIN_HASH = /^(?:0x[0-9a-fA-F]{64}|[0-9a-fA-F]{64}|[1-9A-HJ-NP-Za-km-z]{64,88})$/

export const generatedTestHash = () => `test_${crypto.randomUUID().replaceAll("-", "")}`

/**
 * Test helpers (issue #55): pay, confirm, reorganise away and expire an invoice without a chain,
 * feeding evidence through the chain watchers' entry point (PaymentEvidence), so that the invoice,
 * its outbox events and its webhooks go exactly as a watcher's evidence makes them go. Callers:
 * the merchant API's test helpers (test keys, test invoices), the payer page's "Simulate payment"
 * of a test invoice, and the development simulator.
 */
export class TestHelpers extends Context.Service<TestHelpers, {
  readonly pay: (scope: HelperScope, invoiceId: string, input: PayInput) => Effect.Effect<HelperResult, TestHelperError>
  /** The payment with that hash now has `confirmations` (as a watcher reports a new block). */
  readonly confirm: (scope: HelperScope, invoiceId: string, input: { readonly transactionHash: string; readonly confirmations: number }) => Effect.Effect<
    HelperResult,
    TestHelperError
  >
  /** The payment with that hash is invalidated, as a chain reorganisation does (reason `chain_reorganization` unless given). */
  readonly reorg: (scope: HelperScope, invoiceId: string, input: { readonly transactionHash: string; readonly reason?: string | undefined }) => Effect.Effect<
    HelperResult,
    TestHelperError
  >
  /** Moves the payable deadline to now and lets the lifecycle decide (a payable invoice expires; a paid one keeps its status). */
  readonly expire: (scope: HelperScope, invoiceId: string) => Effect.Effect<InvoiceParts, InvoiceNotFound>
}>()("TestMode/TestHelpers") {
  static readonly layerWithoutDependencies = Layer.effect(
    TestHelpers,
    Effect.gen(function*() {
      const invoices = yield* Invoices
      const evidence = yield* PaymentEvidence
      const repo = yield* InvoiceRepo

      const find = (scope: HelperScope, id: string) =>
        (scope.merchantId === undefined ? invoices.getPublic(id) : invoices.get(scope.merchantId, id, scope.livemode)).pipe(
          Effect.flatMap((parts) =>
            scope.livemode !== undefined && parts.invoice.livemode !== scope.livemode ? Effect.fail(new InvoiceNotFound({ invoiceId: id })) : Effect.succeed(parts)
          )
        )
      const answer = (scope: HelperScope, id: string) => (result: EvidenceResult) => Effect.map(find(scope, id), (parts): HelperResult => ({ payment: result.payment, parts }))
      const rejected = (error: { readonly reason: string }) => new HelperEvidenceRejected({ reason: error.reason })
      const paymentByHash = (parts: InvoiceParts, transactionHash: string) => {
        const payment = parts.payments.find((candidate) => candidate.transactionHash === transactionHash)
        return payment === undefined ? Effect.fail(new HelperPaymentNotFound()) : Effect.succeed(payment)
      }

      const pay = Effect.fn("TestHelpers.pay")(function*(scope: HelperScope, invoiceId: string, input: PayInput) {
        const parts = yield* find(scope, invoiceId)
        const option = parts.options.find((candidate) => candidate.id === input.paymentOptionId)
        if (option === undefined) return yield* new HelperOptionNotFound()
        const amountAtomic = parseAtomic(input.amount, option.decimals)
        if (amountAtomic === undefined || amountAtomic === 0n) return yield* new HelperInvalidAmount({ decimals: option.decimals })
        if (!parts.invoice.livemode && input.transactionHash !== undefined && CHAIN_HASH.test(input.transactionHash)) {
          return yield* new HelperChainHashRefused()
        }
        const now = yield* Clock.currentTimeMillis
        const deadline = parts.invoice.timing.payableUntilAt.getTime()
        const observedAt = new Date(input.late === undefined ? now : input.late ? Math.max(now, deadline + 1) : Math.min(now, deadline))
        const result = yield* evidence.record({
          paymentOptionId: option.id,
          transactionHash: input.transactionHash ?? generatedTestHash(),
          outputIndex: 0,
          amountAtomic,
          confirmations: input.confirmations ?? 0,
          observedAt,
          payerAddress: input.payerAddress
        }).pipe(Effect.mapError(rejected))
        return yield* answer(scope, invoiceId)(result)
      })

      const confirm = Effect.fn("TestHelpers.confirm")(
        function*(scope: HelperScope, invoiceId: string, input: { readonly transactionHash: string; readonly confirmations: number }) {
          const payment = yield* paymentByHash(yield* find(scope, invoiceId), input.transactionHash)
          const result = yield* evidence.record({
            paymentOptionId: payment.paymentOptionId,
            transactionHash: input.transactionHash,
            outputIndex: payment.outputIndex,
            amountAtomic: payment.amountAtomic,
            confirmations: input.confirmations,
            observedAt: payment.observedAt
          }).pipe(Effect.mapError(rejected))
          return yield* answer(scope, invoiceId)(result)
        }
      )

      const reorg = Effect.fn("TestHelpers.reorg")(
        function*(scope: HelperScope, invoiceId: string, input: { readonly transactionHash: string; readonly reason?: string | undefined }) {
          const payment = yield* paymentByHash(yield* find(scope, invoiceId), input.transactionHash)
          const result = yield* evidence.invalidate({
            network: payment.network,
            transactionHash: input.transactionHash,
            outputIndex: payment.outputIndex,
            reason: input.reason ?? "chain_reorganization"
          }).pipe(Effect.mapError(rejected))
          return yield* answer(scope, invoiceId)(result)
        }
      )

      const expire = Effect.fn("TestHelpers.expire")(function*(scope: HelperScope, invoiceId: string) {
        yield* find(scope, invoiceId)
        const now = yield* Clock.currentTimeMillis
        // Under the invoice's row lock, as every other write: evidence recorded meanwhile is kept. The
        // deadline is applied here, not by the sweeper, which may hold an invoice for a lagging watcher.
        yield* repo.withTransaction(Effect.gen(function*() {
          const locked = yield* repo.lockForUpdate(invoiceId)
          if (Option.isNone(locked) || !EXPIRABLE.includes(locked.value.status)) return
          const invoice = locked.value
          const moved = { ...invoice, timing: { ...invoice.timing, payableUntilAt: new Date(now - 1) } }
          const expired = applyEvents(moved, [{ type: "DEADLINE_PASSED" }], new Date(now))
          yield* repo.save(expired.invoice, expired.events)
        }))
        return yield* find(scope, invoiceId)
      })

      return { pay, confirm, reorg, expire }
    })
  )
  static readonly layer = TestHelpers.layerWithoutDependencies.pipe(Layer.provide([InvoiceChanges.publishingRepo, PaymentEvidence.layer, Invoices.layer]))
}
