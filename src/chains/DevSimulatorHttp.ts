import { statusesAccepting } from "../lifecycle/Lifecycle.ts"
import { Clock, Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentMerchant } from "../http/CurrentMerchant.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { merchantInvoiceView, paymentView } from "../domain/InvoiceViews.ts"
import { parseAtomic } from "../domain/Money.ts"
import { checkoutApi } from "../http/CheckoutApi.ts"
import { DevSimulatorErrors, DevSimulatorGroup } from "./DevSimulatorApi.ts"
import { mapDomainErrors } from "../http/ErrorMapping.ts"
import { DeadlineSweeper } from "./DeadlineSweeper.ts"
import { InvoiceRepo } from "../invoices/InvoiceRepo.ts"
import { Invoices } from "../invoices/Invoices.ts"
import { type EvidenceResult, PaymentEvidence } from "../invoices/PaymentEvidence.ts"
import type { HandlerRequest } from "../http/HandlerRequest.ts"
import { InvoiceChanges } from "../invoices/InvoiceChanges.ts"

const simulatedHash = () => `sim_${crypto.randomUUID().replaceAll("-", "")}`

const EXPIRABLE = statusesAccepting({ type: "DEADLINE_PASSED" })

const devContext = Effect.gen(function*() {
  return {
    invoices: yield* Invoices,
    evidence: yield* PaymentEvidence,
    repo: yield* InvoiceRepo,
    sweeper: yield* DeadlineSweeper,
    publicUrl: (yield* AppConfig).publicUrl
  }
})
type Dev = Effect.Success<typeof devContext>
type Request<Id extends string> = HandlerRequest<typeof DevSimulatorGroup, Id>

const owned = (dev: Dev, id: string) => CurrentMerchant.pipe(Effect.flatMap((merchant) => mapDomainErrors(dev.invoices.get(merchant.merchantId, id))))

const answer = (dev: Dev, id: string, result: EvidenceResult) =>
  Effect.all([owned(dev, id), Clock.currentTimeMillis]).pipe(
    Effect.map(([parts, millis]) => ({ payment: paymentView(result.payment), invoice: merchantInvoiceView(parts, dev.publicUrl, new Date(millis)) }))
  )

const paymentByHash = (dev: Dev, id: string, transactionHash: string) =>
  owned(dev, id).pipe(Effect.flatMap((parts) => {
    const payment = parts.payments.find((candidate) => candidate.transactionHash === transactionHash)
    return payment === undefined
      ? Effect.fail(DevSimulatorErrors.paymentNotFound())
      : Effect.succeed(payment)
  }))

const simulatePayment = (dev: Dev) => ({ params, payload }: Request<"simulatePayment">) =>
  Effect.gen(function*() {
    const parts = yield* owned(dev, params.id)
    const option = parts.options.find((candidate) => candidate.id === payload.paymentOptionId)
    if (option === undefined) return yield* DevSimulatorErrors.optionNotFound()
    const amountAtomic = parseAtomic(payload.amount, option.decimals)
    if (amountAtomic === undefined || amountAtomic === 0n) {
      return yield* DevSimulatorErrors.invalidAmount(option.decimals)
    }
    const now = yield* Clock.currentTimeMillis
    const deadline = parts.invoice.timing.payableUntilAt.getTime()
    const observedAt = new Date(payload.late === true ? Math.max(now, deadline + 1) : Math.min(now, deadline))
    const result = yield* dev.evidence.record({
      paymentOptionId: option.id,
      transactionHash: payload.transactionHash ?? simulatedHash(),
      outputIndex: 0,
      amountAtomic,
      confirmations: payload.confirmations ?? 0,
      observedAt,
      payerAddress: payload.payerAddress
    }).pipe(Effect.mapError(DevSimulatorErrors.evidenceRejected))
    return yield* answer(dev, params.id, result)
  })

const simulateConfirmations = (dev: Dev) => ({ params, payload }: Request<"simulateConfirmations">) =>
  Effect.gen(function*() {
    const payment = yield* paymentByHash(dev, params.id, payload.transactionHash)
    const result = yield* dev.evidence.record({
      paymentOptionId: payment.paymentOptionId,
      transactionHash: payload.transactionHash,
      outputIndex: payment.outputIndex,
      amountAtomic: payment.amountAtomic,
      confirmations: payload.confirmations,
      observedAt: payment.observedAt
    }).pipe(Effect.mapError(DevSimulatorErrors.evidenceRejected))
    return yield* answer(dev, params.id, result)
  })

const simulateInvalidation = (dev: Dev) => ({ params, payload }: Request<"simulateInvalidation">) =>
  Effect.gen(function*() {
    const payment = yield* paymentByHash(dev, params.id, payload.transactionHash)
    const result = yield* dev.evidence.invalidate({
      network: payment.network,
      transactionHash: payload.transactionHash,
      outputIndex: payment.outputIndex,
      reason: payload.reason ?? "simulated_reorg"
    }).pipe(Effect.mapError(DevSimulatorErrors.evidenceRejected))
    return yield* answer(dev, params.id, result)
  })

const simulateExpiry = (dev: Dev) => ({ params }: Request<"simulateExpiry">) =>
  Effect.gen(function*() {
    yield* owned(dev, params.id)
    const now = yield* Clock.currentTimeMillis
    // Under the invoice's row lock, as every other write: evidence recorded meanwhile is kept.
    const moved = yield* dev.repo.withTransaction(Effect.gen(function*() {
      const invoice = yield* dev.repo.lockForUpdate(params.id)
      if (invoice === undefined || !EXPIRABLE.includes(invoice.status)) return false
      yield* dev.repo.save({ ...invoice, timing: { ...invoice.timing, payableUntilAt: new Date(now - 1) } }, [])
      return true
    }))
    if (moved) yield* dev.sweeper.sweep()
    return merchantInvoiceView(yield* owned(dev, params.id), dev.publicUrl, new Date(yield* Clock.currentTimeMillis))
  })

export const DevSimulatorHttpLive = HttpApiBuilder.group(checkoutApi(DevSimulatorGroup), "dev", (handlers) =>
  Effect.map(devContext, (dev) =>
    handlers
      .handle("simulatePayment", simulatePayment(dev))
      .handle("simulateConfirmations", simulateConfirmations(dev))
      .handle("simulateInvalidation", simulateInvalidation(dev))
      .handle("simulateExpiry", simulateExpiry(dev))))
  .pipe(Layer.provide([InvoiceChanges.publishingRepo, PaymentEvidence.layer, Invoices.layer, DeadlineSweeper.layer]))
