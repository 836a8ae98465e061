import { Clock, Context, Effect, FiberSet, Layer, Result } from "effect"
import { BillingGate } from "../accounts/BillingGate.ts"
import {
  BillingBlocked,
  BitcoinAddressesPreparing,
  CheckoutConfigurationNotFound,
  IncompatibleTiming,
  InvalidRequest,
  InvoiceNotFound,
  InvoiceTransitionRejected,
  PaymentBackendUnavailable,
  PaymentMethodUnavailable
} from "../domain/Errors.ts"
import { leastConfirmedPayment } from "../domain/Evidence.ts"
import { type InvoiceRecord, newInvoice } from "../domain/Invoice.ts"
import { applyDecision, type DecisionContext } from "../lifecycle/ApplyDecision.ts"
import { InvoiceId, MerchantId, PaymentOptionId } from "../domain/Ids.ts"
import { usdNumberToMicros } from "../domain/Money.ts"
import { resolveTiming } from "../domain/Timing.ts"
import type { ExceptionCloseAction } from "../domain/Statuses.ts"
import type { InvoiceEvent } from "../lifecycle/InvoiceMachine.ts"
import { decide, initialDecision } from "../lifecycle/Lifecycle.ts"
import { lifecycleStateOf } from "../lifecycle/Settlement.ts"
import { BitcoinAddressPool, GAP_LIMIT } from "../payments/BitcoinAddressPool.ts"
import { CheckoutSettingsRepo } from "../payments/CheckoutSettingsRepo.ts"
import { isEvm } from "../payments/Networks.ts"
import type { PaymentMethod } from "../payments/PaymentMethod.ts"
import { PaymentWorker } from "../payments/PaymentWorker.ts"
import { PriceOracle, type PriceQuote, type PriceUnavailable, type StablecoinOffPeg } from "../payments/PriceOracle.ts"
import { RailSettingsService } from "../payments/RailSettings.ts"
import { EvidenceFollowUp } from "./EvidenceFollowUp.ts"
import { type InvoiceParts, InvoiceRepo, type NewOption } from "./InvoiceRepo.ts"
import { timingFromOverride, type TimingOverrideInput } from "../domain/TimingOverride.ts"

export interface Merchant {
  readonly merchantId: string
  readonly billingStatus: "active" | "blocked"
}

/** The invoice's fields a merchant may set at creation, typed by the entity. */
type MerchantSupplied = "productName" | "issuedBy" | "billTo" | "redirectUrl" | "merchantReference" | "customerId" | "customerEmail" | "metadata"

/** What a merchant asks for when creating an invoice (the merchant API's request decodes into it). */
export type InvoiceDraft = { readonly [K in MerchantSupplied]?: InvoiceRecord[K] | undefined } & {
  readonly amountUsd: number
  readonly paymentTiming?: TimingOverrideInput | null | undefined
}

const needsDerivation = (method: PaymentMethod) => isEvm(method.network) && method.railType === "address_transfer"

const isStablecoinCode = (assetCode: string) => assetCode === "USDT" || assetCode === "USDC"
const isStablecoin = (method: PaymentMethod) => isStablecoinCode(method.assetCode)

/** The 502's words for an asset without a price: its sources disagree, or do not answer. */
const priceRefusal = (assetCode: string, failure: PriceUnavailable | StablecoinOffPeg) =>
  failure._tag === "PriceUnavailable" && failure.cause === "disagree"
    ? `The ${assetCode} price sources disagree`
    : `The ${assetCode} price source is unavailable`

export class Invoices extends Context.Service<Invoices, {
  readonly create: (merchant: Merchant, body: InvoiceDraft) => Effect.Effect<
    InvoiceParts,
    | InvalidRequest
    | BillingBlocked
    | CheckoutConfigurationNotFound
    | IncompatibleTiming
    | PaymentMethodUnavailable
    | PaymentBackendUnavailable
    | BitcoinAddressesPreparing
  >
  readonly get: (merchantId: string, id: string) => Effect.Effect<InvoiceParts, InvoiceNotFound>
  readonly getPublic: (id: string) => Effect.Effect<InvoiceParts, InvoiceNotFound>
  readonly void: (merchantId: string, id: string) => Effect.Effect<InvoiceParts, InvoiceNotFound | InvoiceTransitionRejected>
  readonly recordPayment: (merchantId: string, id: string, note: string) => Effect.Effect<InvoiceParts, InvoiceNotFound | InvoiceTransitionRejected>
  readonly closeException: (merchantId: string, id: string, action: ExceptionCloseAction, note: string) => Effect.Effect<InvoiceParts, InvoiceNotFound | InvoiceTransitionRejected>
}>()("Invoices/Invoices") {
  static readonly layer = Layer.effect(
    Invoices,
    Effect.gen(function*() {
      const repo = yield* InvoiceRepo
      const followUp = yield* EvidenceFollowUp
      const settingsRepo = yield* CheckoutSettingsRepo
      const oracle = yield* PriceOracle
      const rails = yield* RailSettingsService
      const addressPool = yield* BitcoinAddressPool
      const paymentWorker = yield* PaymentWorker
      const billing = yield* BillingGate
      // Background refills belong to the service: interrupted when it shuts down, never orphaned.
      // They run in the service's context, not the request's: a refill that waits for its turn
      // must not keep the request that started it (and its response) alive.
      const runInBackground = yield* FiberSet.runtime(yield* FiberSet.make())()

      const now = Clock.currentTimeMillis.pipe(Effect.map((millis) => new Date(millis)))

      const find = (merchantId: string | undefined, id: string) =>
        repo.find(id).pipe(
          Effect.flatMap((parts) =>
            parts === undefined || (merchantId !== undefined && parts.invoice.merchantId !== merchantId)
              ? Effect.fail(new InvoiceNotFound({ invoiceId: id }))
              : Effect.succeed(parts)
          )
        )

      const unconfirmedPayment = (id: string) =>
        Effect.map(repo.find(id), (parts) => {
          if (parts === undefined) return undefined
          const required = new Map<string, number>(parts.options.map((option) => [option.id, option.requiredConfirmations]))
          return leastConfirmedPayment(parts.payments, (optionId) => required.get(optionId) ?? 0)
        })

      const transition = Effect.fn("Invoices.transition")(function*(
        id: string,
        event: InvoiceEvent,
        options: { readonly merchantId?: string | undefined; readonly operation: InvoiceTransitionRejected["operation"]; readonly note?: string | undefined }
      ) {
        return yield* repo.withTransaction(Effect.gen(function*() {
          const invoice = yield* repo.lockForUpdate(id)
          if (invoice === undefined || (options.merchantId !== undefined && invoice.merchantId !== options.merchantId)) {
            return yield* new InvoiceNotFound({ invoiceId: id })
          }
          const decision = decide(lifecycleStateOf(invoice), event)
          if (decision === undefined) {
            return yield* new InvoiceTransitionRejected({ invoiceId: id, operation: options.operation, status: invoice.status })
          }
          if (event.type === "CLOSE_EXCEPTION" && event.action === "accept_late_payment") {
            // `confirmed` must mean confirmed funds: read under the lock, so no evidence changes in between.
            const short = yield* unconfirmedPayment(id)
            if (short !== undefined) {
              return yield* new InvoiceTransitionRejected({
                invoiceId: id,
                operation: options.operation,
                status: invoice.status,
                detail: `The late payment has ${short.confirmations} of ${short.required} confirmations; accept it once it is confirmed`
              })
            }
          }
          const context: DecisionContext = {
            now: yield* now,
            note: options.note,
            closeAction: event.type === "CLOSE_EXCEPTION" ? event.action : undefined
          }
          const applied = applyDecision(invoice, decision, context)
          yield* repo.save(applied.invoice, applied.events)
          if (event.type === "CLOSE_EXCEPTION") yield* followUp.afterCoverageLoss(applied.invoice.id, "exception_closed")
          return applied.invoice
        }))
      })

      const create = Effect.fn("Invoices.create")(function*(merchant: Merchant, body: InvoiceDraft) {
        if (!(yield* billing.allowsInvoiceCreation(merchant))) return yield* new BillingBlocked()
        const amountMicros = usdNumberToMicros(body.amountUsd, 2)
        if (amountMicros === undefined) return yield* new InvalidRequest({ message: "amountUsd must have at most 2 decimal places" })
        const settings = yield* settingsRepo.find(merchant.merchantId)
        if (!settings.configured) return yield* new CheckoutConfigurationNotFound()
        const timingInput = body.paymentTiming === undefined || body.paymentTiming === null
          ? settings.timing
          : timingFromOverride(body.paymentTiming)
        if (timingInput instanceof InvalidRequest) return yield* timingInput
        const createdAt = yield* now
        const timing = resolveTiming(timingInput, createdAt)

        let methods: ReadonlyArray<PaymentMethod> = settings.methods.filter((method) => method.enabled && rails.isAvailable(method))
        if (timing.mode === "due_date") {
          methods = methods.filter((method) => method.network !== "bitcoin")
          if (!methods.some(isStablecoin)) {
            return yield* new IncompatibleTiming({ message: "A due-date invoice requires an enabled USDT or USDC payment method" })
          }
        }
        if (methods.length === 0) {
          return yield* new PaymentMethodUnavailable({ message: "No enabled payment method is available for this invoice" })
        }

        const bitcoinTaken = new Map<string, { readonly derivationIndex: number; readonly address: string }>()
        for (const method of methods.filter((candidate) => candidate.network === "bitcoin" && candidate.xpub !== null)) {
          const taken = yield* addressPool.take(method.xpub!)
          // Top the pool up in the background when it runs low; this invoice does not wait for it.
          if (taken === undefined || taken.remaining < GAP_LIMIT / 2) runInBackground(addressPool.refill(method.xpub!))
          if (taken !== undefined) bitcoinTaken.set(method.id, taken)
        }
        const withoutPendingBitcoin = methods.filter((method) => method.network !== "bitcoin" || bitcoinTaken.has(method.id))
        if (withoutPendingBitcoin.length === 0) return yield* new BitcoinAddressesPreparing()
        methods = withoutPendingBitcoin

        // Every asset's quote at once (each asks its price sources in parallel). A BTC price that cannot
        // be established fails the invoice (502); a stablecoin the peg guard refuses (off its peg, or its
        // sources cannot confirm it) is left out of the invoice, which fails only when nothing is left.
        const assets = [...new Set(methods.map((method) => method.assetCode))]
        const quoted = yield* Effect.forEach(assets, (assetCode) => Effect.result(oracle.quote(assetCode)), { concurrency: "unbounded" })
        const quotes: Array<PriceQuote> = []
        const refused = new Map<string, string>()
        for (const [index, result] of quoted.entries()) {
          const assetCode = assets[index]
          if (Result.isSuccess(result)) quotes.push(result.success)
          else if (isStablecoinCode(assetCode)) {
            refused.set(assetCode, result.failure._tag === "StablecoinOffPeg" ? `The ${assetCode} price is off its 1 USD peg` : priceRefusal(assetCode, result.failure))
          } else return yield* new PaymentBackendUnavailable({ message: priceRefusal(assetCode, result.failure) })
        }
        if (refused.size > 0) {
          methods = methods.filter((method) => !refused.has(method.assetCode))
          if (methods.length === 0) return yield* new PaymentBackendUnavailable({ message: [...refused.values()].join("; ") })
        }
        const rates = new Map(quotes.map((quote) => [quote.assetCode, quote.usdMicros]))

        const indexes = yield* settingsRepo.reserveIndexes(
          methods.flatMap((method) => needsDerivation(method) && method.xpub !== null ? [{ id: method.id, xpub: method.xpub, network: method.network }] : [])
        )
        const invoiceId = InvoiceId.make(crypto.randomUUID())
        const defaultMethod = methods.find((method) => method.isDefault) ?? methods[0]
        const label = body.issuedBy ?? settings.issuedBy ?? "Checkout"
        // One task for the worker thread: EVM addresses (options sharing an extended key and index
        // share one), URIs, QR codes and payloads of every option.
        const built = yield* paymentWorker.options(rails.settings, methods.map((method, position) => ({
          invoiceId,
          amountMicros,
          label,
          method,
          optionId: PaymentOptionId.make(crypto.randomUUID()),
          isDefault: method === defaultMethod,
          position,
          rateMicros: rates.get(method.assetCode) ?? 1_000_000n,
          derivationIndex: indexes.get(method.id) ?? bitcoinTaken.get(method.id)?.derivationIndex,
          knownAddress: bitcoinTaken.get(method.id)?.address
        }))).pipe(Effect.mapError(() => new PaymentBackendUnavailable({ message: "The payment options could not be built" })))
        const options: Array<NewOption> = []
        for (const [position, outcome] of built.entries()) {
          const method = methods[position]
          if (!outcome.ok) {
            return yield* new PaymentBackendUnavailable({ message: `The ${method.network} ${method.assetCode} payment method backend is unavailable` })
          }
          options.push({ ...outcome.option, position })
        }

        const initial = initialDecision()
        const invoice = newInvoice({
          id: invoiceId,
          merchantId: MerchantId.make(merchant.merchantId),
          amountMicros,
          status: initial.state.status,
          timing,
          productName: body.productName ?? null,
          issuedBy: body.issuedBy ?? settings.issuedBy,
          billTo: body.billTo ?? null,
          redirectUrl: body.redirectUrl ?? null,
          merchantReference: body.merchantReference ?? null,
          customerId: body.customerId ?? null,
          customerEmail: body.customerEmail ?? null,
          metadata: body.metadata ?? null,
          defaultPaymentOptionId: options.find((option) => option.isDefault)?.id ?? null,
          createdAt
        })
        const { events } = applyDecision(invoice, initial, { now: createdAt })
        yield* repo.insert(invoice, options, events, quotes)
        return { invoice, options, payments: [] }
      })

      return {
        create,
        get: (merchantId, id) => find(merchantId, id),
        getPublic: (id) => find(undefined, id),
        void: Effect.fn("Invoices.void")(function*(merchantId: string, id: string) {
          yield* transition(id, { type: "VOID" }, { merchantId, operation: "void" })
          return yield* find(merchantId, id)
        }),
        recordPayment: Effect.fn("Invoices.recordPayment")(function*(merchantId: string, id: string, note: string) {
          yield* transition(id, { type: "RECORD_PAYMENT" }, { merchantId, operation: "record-payment", note })
          return yield* find(merchantId, id)
        }),
        closeException: Effect.fn("Invoices.closeException")(function*(merchantId: string, id: string, action: ExceptionCloseAction, note: string) {
          yield* transition(id, { type: "CLOSE_EXCEPTION", action }, { merchantId, operation: "close-exception", note })
          return yield* find(merchantId, id)
        })
      }
    })
  )
}
