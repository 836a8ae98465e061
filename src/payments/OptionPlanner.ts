import { Context, Effect, FiberSet, Layer, Result } from "effect"
import { BitcoinAddressesPreparing, CheckoutConfigurationNotFound, IncompatibleTiming, PaymentBackendUnavailable, PaymentMethodUnavailable } from "../domain/Errors.ts"
import { type InvoiceId, PaymentOptionId } from "../domain/Ids.ts"
import type { PaymentOptionRecord } from "../domain/Invoice.ts"
import type { Micros } from "../domain/Money.ts"
import { type PaymentTimingInput, resolveTiming, type ResolvedTiming } from "../domain/Timing.ts"
import { BitcoinAddressPool, GAP_LIMIT } from "./BitcoinAddressPool.ts"
import { CheckoutSettingsRepo } from "./CheckoutSettingsRepo.ts"
import { isEvm } from "./Networks.ts"
import { isMethodAvailable, type PaymentMethod } from "./PaymentMethod.ts"
import { PaymentWorker } from "./PaymentWorker.ts"
import { PriceOracle, type PriceQuote, type PriceUnavailable, type StablecoinOffPeg } from "./PriceOracle.ts"
import { RailSettings } from "./RailSettings.ts"
import type { MerchantId } from "../domain/Ids.ts"

/** A payment option as an invoice stores it: the record, its place and what its address was derived from. */
export interface NewOption extends PaymentOptionRecord {
  readonly position: number
  readonly reference: string | null
  readonly derivationIndex: number | null
}

export interface PlanRequest {
  readonly merchantId: MerchantId
  readonly invoiceId: InvoiceId
  readonly amountMicros: Micros
  readonly createdAt: Date
  /** The invoice's own timing (already checked at the edge); the merchant's default when absent. */
  readonly timing: PaymentTimingInput | undefined
  /** The invoice's issuer name; the merchant's when absent (the payment URIs' label). */
  readonly issuedBy: string | null | undefined
  /**
   * False for a test invoice (issue #55): the merchant's test settings (the live ones until test
   * settings are saved) and options that name testnets (see OptionRequest.livemode).
   */
  readonly livemode: boolean
}

/** The options of a new invoice and what they rest on. */
export interface OptionPlan {
  readonly timing: ResolvedTiming
  readonly issuedBy: string | null
  readonly options: ReadonlyArray<NewOption>
  /** What each asset's rate rested on, recorded beside the invoice. */
  readonly quotes: ReadonlyArray<PriceQuote>
}

export type PlanError =
  | CheckoutConfigurationNotFound
  | IncompatibleTiming
  | PaymentMethodUnavailable
  | PaymentBackendUnavailable
  | BitcoinAddressesPreparing

type BitcoinTaken = ReadonlyMap<string, { readonly derivationIndex: number; readonly address: string }>

const needsDerivation = (method: PaymentMethod) => isEvm(method.network) && method.railType === "address_transfer"
const isStablecoinCode = (assetCode: string) => assetCode === "USDT" || assetCode === "USDC"
const isStablecoin = (method: PaymentMethod) => isStablecoinCode(method.assetCode)

/** The methods an invoice of this timing may offer: enabled, available here, and no bitcoin for a due date. */
const offeredMethods = (methods: ReadonlyArray<PaymentMethod & { readonly enabled: boolean }>, timing: ResolvedTiming, available: (method: PaymentMethod) => boolean) =>
  Effect.gen(function*() {
    let offered: ReadonlyArray<PaymentMethod> = methods.filter((method) => method.enabled && available(method))
    if (timing.mode === "due_date") {
      offered = offered.filter((method) => method.network !== "bitcoin")
      if (!offered.some(isStablecoin)) {
        return yield* new IncompatibleTiming({ message: "A due-date invoice requires an enabled USDT or USDC payment method" })
      }
    }
    if (offered.length === 0) {
      return yield* new PaymentMethodUnavailable({ message: "No enabled payment method is available for this invoice" })
    }
    return offered
  })

/** The 502's words for an asset without a price: its sources disagree, or do not answer. */
const priceRefusal = (assetCode: string, failure: PriceUnavailable | StablecoinOffPeg) =>
  failure._tag === "PriceUnavailable" && failure.cause === "disagree"
    ? `The ${assetCode} price sources disagree`
    : `The ${assetCode} price source is unavailable`

/**
 * Every asset's quote at once (each asks its price sources in parallel). A BTC price that cannot be
 * established fails the invoice (502); a stablecoin the peg guard refuses (off its peg, or its
 * sources cannot confirm it) is left out of the invoice, which fails only when nothing is left.
 */
const quoteMethods = (oracle: PriceOracle["Service"], methods: ReadonlyArray<PaymentMethod>) =>
  Effect.gen(function*() {
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
    const quotedMethods = methods.filter((method) => !refused.has(method.assetCode))
    if (quotedMethods.length === 0) return yield* new PaymentBackendUnavailable({ message: [...refused.values()].join("; ") })
    return { methods: quotedMethods, quotes }
  })

/**
 * Plans a new invoice's payment options: the merchant's methods → their quotes → fresh
 * derivation indexes (EVM deposits) and pooled bitcoin addresses → the options, built on the
 * payment worker thread (addresses, URIs, QR codes, payloads).
 */
export class OptionPlanner extends Context.Service<OptionPlanner, {
  readonly plan: (request: PlanRequest) => Effect.Effect<OptionPlan, PlanError>
}>()("Payments/OptionPlanner") {
  static readonly layerWithoutDependencies = Layer.effect(
    OptionPlanner,
    Effect.gen(function*() {
      const settingsRepo = yield* CheckoutSettingsRepo
      const oracle = yield* PriceOracle
      const rails = yield* RailSettings
      const addressPool = yield* BitcoinAddressPool
      const paymentWorker = yield* PaymentWorker
      // Background refills belong to the service: interrupted when it shuts down, never orphaned.
      // They run in the service's context, not the request's: a refill that waits for its turn
      // must not keep the request that started it (and its response) alive.
      const runInBackground = yield* FiberSet.runtime(yield* FiberSet.make())()

      /** A pooled address for each bitcoin method; methods whose pool is still empty are left out. */
      const takeBitcoinAddresses = Effect.fn("OptionPlanner.takeBitcoinAddresses")(function*(methods: ReadonlyArray<PaymentMethod>) {
        const taken = new Map<string, { readonly derivationIndex: number; readonly address: string }>()
        for (const method of methods.filter((candidate) => candidate.network === "bitcoin" && candidate.xpub !== null)) {
          const address = yield* addressPool.take(method.xpub!)
          // Top the pool up in the background when it runs low; this invoice does not wait for it.
          if (address === undefined || address.remaining < GAP_LIMIT / 2) runInBackground(addressPool.refill(method.xpub!))
          if (address !== undefined) taken.set(method.id, address)
        }
        const ready = methods.filter((method) => method.network !== "bitcoin" || taken.has(method.id))
        if (ready.length === 0) return yield* new BitcoinAddressesPreparing()
        return { methods: ready, taken: taken as BitcoinTaken }
      })

      /** One task for the worker thread: EVM addresses (options sharing an extended key and index share one), URIs, QR codes, payloads. */
      const buildOptions = Effect.fn("OptionPlanner.buildOptions")(function*(
        request: PlanRequest & { readonly label: string },
        methods: ReadonlyArray<PaymentMethod>,
        quotes: ReadonlyArray<PriceQuote>,
        bitcoin: BitcoinTaken
      ) {
        const rates = new Map(quotes.map((quote) => [quote.assetCode, quote.usdMicros]))
        const indexes = yield* settingsRepo.reserveIndexes(
          methods.flatMap((method) => needsDerivation(method) && method.xpub !== null ? [{ id: method.id, xpub: method.xpub, network: method.network }] : [])
        )
        const defaultMethod = methods.find((method) => method.isDefault) ?? methods[0]
        const built = yield* paymentWorker.options(rails, methods.map((method, position) => ({
          invoiceId: request.invoiceId,
          amountMicros: request.amountMicros,
          label: request.label,
          method,
          optionId: PaymentOptionId.make(crypto.randomUUID()),
          isDefault: method === defaultMethod,
          position,
          rateMicros: rates.get(method.assetCode) ?? 1_000_000n,
          derivationIndex: indexes.get(method.id) ?? bitcoin.get(method.id)?.derivationIndex,
          knownAddress: bitcoin.get(method.id)?.address,
          livemode: request.livemode
        }))).pipe(Effect.mapError(() => new PaymentBackendUnavailable({ message: "The payment options could not be built" })))
        const options: Array<NewOption> = []
        for (const [position, outcome] of built.entries()) {
          const method = methods[position]
          if (!outcome.ok) {
            return yield* new PaymentBackendUnavailable({ message: `The ${method.network} ${method.assetCode} payment method backend is unavailable` })
          }
          options.push({ ...outcome.option, position })
        }
        return options
      })

      const plan = Effect.fn("OptionPlanner.plan")(function*(request: PlanRequest) {
        const settings = yield* settingsRepo.find(request.merchantId, request.livemode)
        if (!settings.configured) return yield* new CheckoutConfigurationNotFound()
        const timing = resolveTiming(request.timing ?? settings.timing, request.createdAt)
        const offered = yield* offeredMethods(settings.methods, timing, (method) => isMethodAvailable(rails, method))
        const bitcoin = yield* takeBitcoinAddresses(offered)
        const { methods, quotes } = yield* quoteMethods(oracle, bitcoin.methods)
        const issuedBy = request.issuedBy ?? settings.issuedBy
        const options = yield* buildOptions({ ...request, label: issuedBy ?? "Checkout" }, methods, quotes, bitcoin.taken)
        return { timing, issuedBy, options, quotes }
      })

      return { plan }
    })
  )

  static readonly layer = OptionPlanner.layerWithoutDependencies.pipe(
    Layer.provide([CheckoutSettingsRepo.layer, BitcoinAddressPool.layer, PaymentWorker.layer, PriceOracle.layer, RailSettings.layer])
  )
}
