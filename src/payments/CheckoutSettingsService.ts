import { Context, Effect, Layer } from "effect"
import { watchedNetworks } from "./WatchedNetworks.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { CheckoutSettingsErrors } from "./CheckoutSettingsApi.ts"
import type { CheckoutSettingsBody } from "./CheckoutSettingsApi.ts"
import { timingFromOverride } from "../domain/TimingOverride.ts"
import { type CheckoutSettings, CheckoutSettingsRepo, type MethodInput } from "./CheckoutSettingsRepo.ts"
import { validateMethods } from "./MethodValidation.ts"
import { embedOriginsProblem } from "./EmbedOrigins.ts"
import { publicWalletProblem } from "./PublicWallets.ts"
import { isMethodAvailable, tokenContractOf } from "./PaymentMethod.ts"
import { RailSettings } from "./RailSettings.ts"
import { endpointVariable } from "../config/EndpointVariables.ts"
import { DerivationLedger, describeFresh } from "./DerivationLedger.ts"
import type { MerchantId } from "../domain/Ids.ts"

const xpubsOf = (methods: ReadonlyArray<Pick<MethodInput, "xpub">>) => [...new Set(methods.flatMap((method) => method.xpub === null ? [] : [method.xpub]))]

/** A payment method as the request sent it: a tokenContract, when sent, must be the deployment's. */
type SentMethod = Pick<MethodInput, "network" | "assetCode"> & { readonly tokenContract?: string | null | undefined }

type Body = typeof CheckoutSettingsBody.Type

const methodsOf = (body: Body): Array<MethodInput> =>
  body.paymentMethods.map((method) => ({
    network: method.network,
    assetCode: method.assetCode,
    railType: method.railType,
    enabled: method.enabled ?? true,
    isDefault: method.isDefault ?? false,
    recipientAddress: method.recipientAddress ?? null,
    xpub: method.xpub ?? null,
    startIndex: method.startIndex ?? null
  }))

const makeCheckoutSettings = Effect.gen(function*() {
  const repo = yield* CheckoutSettingsRepo
  const ledger = yield* DerivationLedger
  const rails = yield* RailSettings
  const config = yield* AppConfig
  const watched = watchedNetworks(config.chains)
  // In production nothing but a chain watcher can see a payment: a network without one cannot be
  // offered live. Test methods are paid through the test helpers where no test watcher runs.
  const unwatchedNetwork = (methods: ReadonlyArray<MethodInput>, livemode: boolean) =>
    config.env === "production" && livemode ? methods.find((method) => method.enabled && !watched.includes(method.network))?.network : undefined

  const tokenContract = (method: Pick<MethodInput, "network" | "assetCode">) => method.assetCode === "BTC" ? null : tokenContractOf(rails, method.network, method.assetCode) ?? null

  const view = (settings: CheckoutSettings, nextIndexes: ReadonlyMap<string, number>, warnings: ReadonlyArray<string>) => ({
    livemode: settings.livemode,
    issuedBy: settings.issuedBy,
    paymentTiming: settings.timing,
    paymentMethods: settings.methods.map((method) => ({
      network: method.network,
      assetCode: method.assetCode,
      railType: method.railType,
      enabled: method.enabled,
      isDefault: method.isDefault,
      recipientAddress: method.recipientAddress,
      xpub: method.xpub,
      nextIndex: method.xpub === null ? null : nextIndexes.get(method.xpub) ?? 0,
      tokenContract: tokenContract(method)
    })),
    embedOrigins: settings.embedOrigins,
    warnings
  })

  /** The saved settings with each key's counter and the warning for keys this database never derived from. */
  const current = Effect.fn("CheckoutSettings.get")(function*(merchantId: MerchantId, livemode: boolean) {
    const settings = yield* repo.find(merchantId, livemode)
    const nextIndexes = yield* ledger.nextIndexes(xpubsOf(settings.methods))
    const fresh = yield* ledger.neverIssued(xpubsOf(settings.methods.filter((method) => method.enabled)))
    return view(settings, nextIndexes, fresh.map(describeFresh))
  })

  /** A key behind what this database issued is refused unless the request raises its start index past it. */
  const behindProblem = Effect.fnUntraced(function*(methods: ReadonlyArray<MethodInput>) {
    for (const behind of yield* ledger.behind(xpubsOf(methods))) {
      const raised = methods.some((method) => method.xpub === behind.xpub && (method.startIndex ?? 0) > behind.highestIssued)
      if (!raised) return CheckoutSettingsErrors.counterBehind(methods.findIndex((method) => method.xpub === behind.xpub), behind.highestIssued)
    }
    return undefined
  })

  /** The first reason to refuse these methods, in the order the spec checks them; undefined when they can be saved. */
  const refusal = (methods: ReadonlyArray<MethodInput>, sent: ReadonlyArray<SentMethod>, livemode: boolean) => {
    // Well-known public wallets are refused for real money only: a test method may name one.
    const problem = validateMethods(methods, (method) => method.assetCode === "BTC" || tokenContractOf(rails, method.network, method.assetCode) !== undefined)
      ?? (config.env === "production" && livemode ? publicWalletProblem(methods) : undefined)
    if (problem !== undefined) return CheckoutSettingsErrors.invalidMethod(problem)
    const changedToken = sent.findIndex((method) => method.tokenContract !== undefined && method.tokenContract !== tokenContract(method))
    if (changedToken !== -1) return CheckoutSettingsErrors.tokenContractFixed(changedToken)
    const noFactory = methods.find((method) => method.enabled && method.railType === "wallet_contract" && !isMethodAvailable(rails, { ...method, id: "" }))
    if (noFactory !== undefined) return CheckoutSettingsErrors.noForwarderFactory(noFactory.network)
    const unwatched = unwatchedNetwork(methods, livemode)
    return unwatched === undefined ? undefined : CheckoutSettingsErrors.networkNotWatched(unwatched, endpointVariable(unwatched))
  }

  /** Checks the settings as the spec orders the checks, raises the keys' start indexes, saves, and answers the saved settings. */
  const save = Effect.fn("CheckoutSettings.save")(function*(merchantId: MerchantId, livemode: boolean, body: Body) {
    const methods = methodsOf(body)
    const refused = refusal(methods, body.paymentMethods, livemode) ?? (yield* behindProblem(methods))
    if (refused !== undefined) return yield* refused
    const originsProblem = body.embedOrigins === undefined ? undefined : embedOriginsProblem(body.embedOrigins, config.env === "production" && livemode)
    if (originsProblem !== undefined) return yield* CheckoutSettingsErrors.invalidEmbedOrigins(originsProblem)
    for (const method of methods) if (method.xpub !== null && method.startIndex != null) yield* ledger.raiseStart(method.xpub, method.startIndex)
    const timing = timingFromOverride(body.paymentTiming)
    yield* repo.save(merchantId, livemode, { issuedBy: body.issuedBy ?? null, timing, methods, embedOrigins: body.embedOrigins })
    const saved = yield* current(merchantId, livemode)
    for (const warning of saved.warnings) yield* Effect.logWarning(`checkout settings of merchant ${merchantId}: ${warning}`)
    return saved
  })

  return { get: current, save }
})

/**
 * A merchant's checkout settings per mode, as the dashboard reads and writes them: the methods
 * checked against the deployment (token contracts, forwarder factories, watched networks, public
 * wallets) and the derivation ledger (a key's counter), each refusal the API's error.
 */
export class CheckoutSettingsService extends Context.Service<CheckoutSettingsService, Effect.Success<typeof makeCheckoutSettings>>()(
  "Payments/CheckoutSettingsService"
) {
  static readonly layer = Layer.effect(CheckoutSettingsService, makeCheckoutSettings).pipe(
    Layer.provide([CheckoutSettingsRepo.layer, DerivationLedger.layer, RailSettings.layer])
  )
}
