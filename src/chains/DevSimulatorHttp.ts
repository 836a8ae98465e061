import { statusesAccepting } from "../lifecycle/Lifecycle.ts"
import { Clock, Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentMerchant } from "../http/CurrentMerchant.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { merchantInvoiceView, paymentView } from "../domain/InvoiceViews.ts"
import { parseAtomic } from "../domain/Money.ts"
import { checkoutApi } from "../http/CheckoutApi.ts"
import { DevSimulatorGroup } from "./DevSimulatorApi.ts"
import { DevSimulatorErrors } from "./DevSimulatorApi.ts"
import { mapDomainErrors } from "../http/ErrorMapping.ts"
import { DeadlineSweeper } from "./DeadlineSweeper.ts"
import { InvoiceRepo } from "../invoices/InvoiceRepo.ts"
import { Invoices } from "../invoices/Invoices.ts"
import { type EvidenceResult, PaymentEvidence } from "../invoices/PaymentEvidence.ts"

const simulatedHash = () => `sim_${crypto.randomUUID().replaceAll("-", "")}`

const EXPIRABLE = statusesAccepting({ type: "DEADLINE_PASSED" })

export const DevSimulatorHttpLive = HttpApiBuilder.group(checkoutApi(DevSimulatorGroup), "dev", (handlers) =>
  Effect.gen(function*() {
    const invoices = yield* Invoices
    const evidence = yield* PaymentEvidence
    const repo = yield* InvoiceRepo
    const sweeper = yield* DeadlineSweeper
    const { publicUrl } = yield* AppConfig

    const owned = (id: string) => CurrentMerchant.pipe(Effect.flatMap((merchant) => mapDomainErrors(invoices.get(merchant.merchantId, id))))

    const answer = (id: string, result: EvidenceResult) =>
      Effect.all([owned(id), Clock.currentTimeMillis]).pipe(
        Effect.map(([parts, millis]) => ({ payment: paymentView(result.payment), invoice: merchantInvoiceView(parts, publicUrl, new Date(millis)) }))
      )

    const paymentByHash = (id: string, transactionHash: string) =>
      owned(id).pipe(Effect.flatMap((parts) => {
        const payment = parts.payments.find((candidate) => candidate.transactionHash === transactionHash)
        return payment === undefined
          ? Effect.fail(DevSimulatorErrors.paymentNotFound())
          : Effect.succeed(payment)
      }))

    return handlers
      .handle("simulatePayment", ({ params, payload }) =>
        Effect.gen(function*() {
          const parts = yield* owned(params.id)
          const option = parts.options.find((candidate) => candidate.id === payload.paymentOptionId)
          if (option === undefined) return yield* DevSimulatorErrors.optionNotFound()
          const amountAtomic = parseAtomic(payload.amount, option.decimals)
          if (amountAtomic === undefined || amountAtomic === 0n) {
            return yield* DevSimulatorErrors.invalidAmount(option.decimals)
          }
          const now = yield* Clock.currentTimeMillis
          const deadline = parts.invoice.timing.payableUntilAt.getTime()
          const observedAt = new Date(payload.late === true ? Math.max(now, deadline + 1) : Math.min(now, deadline))
          const result = yield* evidence.record({
            paymentOptionId: option.id,
            transactionHash: payload.transactionHash ?? simulatedHash(),
            outputIndex: 0,
            amountAtomic,
            confirmations: payload.confirmations ?? 0,
            observedAt
          }).pipe(Effect.mapError(DevSimulatorErrors.evidenceRejected))
          return yield* answer(params.id, result)
        }))
      .handle("simulateConfirmations", ({ params, payload }) =>
        Effect.gen(function*() {
          const payment = yield* paymentByHash(params.id, payload.transactionHash)
          const result = yield* evidence.record({
            paymentOptionId: payment.paymentOptionId,
            transactionHash: payload.transactionHash,
            outputIndex: payment.outputIndex,
            amountAtomic: payment.amountAtomic,
            confirmations: payload.confirmations,
            observedAt: payment.observedAt
          }).pipe(Effect.mapError(DevSimulatorErrors.evidenceRejected))
          return yield* answer(params.id, result)
        }))
      .handle("simulateInvalidation", ({ params, payload }) =>
        Effect.gen(function*() {
          const payment = yield* paymentByHash(params.id, payload.transactionHash)
          const result = yield* evidence.invalidate({
            network: payment.network,
            transactionHash: payload.transactionHash,
            outputIndex: payment.outputIndex,
            reason: payload.reason ?? "simulated_reorg"
          }).pipe(Effect.mapError(DevSimulatorErrors.evidenceRejected))
          return yield* answer(params.id, result)
        }))
      .handle("simulateExpiry", ({ params }) =>
        Effect.gen(function*() {
          yield* owned(params.id)
          const now = yield* Clock.currentTimeMillis
          // Under the invoice's row lock, as every other write: evidence recorded meanwhile is kept.
          const moved = yield* repo.withTransaction(Effect.gen(function*() {
            const invoice = yield* repo.lockForUpdate(params.id)
            if (invoice === undefined || !EXPIRABLE.includes(invoice.status)) return false
            yield* repo.save({ ...invoice, timing: { ...invoice.timing, payableUntilAt: new Date(now - 1) } }, [])
            return true
          }))
          if (moved) yield* sweeper.sweep()
          return merchantInvoiceView(yield* owned(params.id), publicUrl, new Date(yield* Clock.currentTimeMillis))
        }))
  }))
