import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentMerchant } from "../http/CurrentMerchant.ts"
import { watchedNetworks } from "./WatchedNetworks.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { checkoutApi } from "../http/CheckoutApi.ts"
import { CheckoutSettingsGroup } from "./CheckoutSettingsApi.ts"
import { BadRequest, Conflict, NotFound } from "../http/ApiErrors.ts"
import { timingFromOverride, timingOverrideProblem } from "../domain/TimingOverride.ts"
import { type CheckoutSettings, CheckoutSettingsRepo, type MethodInput } from "./CheckoutSettingsRepo.ts"
import { validateMethods } from "./MethodValidation.ts"
import { publicWalletProblem } from "./PublicWallets.ts"
import { tokenContractOf } from "./PaymentMethod.ts"
import { RailSettingsService } from "./RailSettings.ts"
import { endpointVariable } from "../config/EndpointVariables.ts"
import type { HandlerRequest } from "../http/HandlerRequest.ts"

const settingsContext = Effect.gen(function*() {
  const config = yield* AppConfig
  return { repo: yield* CheckoutSettingsRepo, rails: yield* RailSettingsService, config, watched: watchedNetworks(config.chains) }
})
type Settings = Effect.Success<typeof settingsContext>

// In production nothing but a chain watcher can see a payment: a network without one cannot be offered.
const unwatchedNetwork = ({ config, watched }: Settings, methods: ReadonlyArray<MethodInput>) =>
  config.env === "production" ? methods.find((method) => method.enabled && !watched.includes(method.network))?.network : undefined

const tokenContract = ({ rails }: Settings, method: Pick<MethodInput, "network" | "assetCode">) =>
  method.assetCode === "BTC" ? null : tokenContractOf(rails.settings, method.network, method.assetCode) ?? null

const view = (context: Settings) => (settings: CheckoutSettings) => ({
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
    tokenContract: tokenContract(context, method)
  }))
})

const current = ({ repo }: Settings, merchantId: string) =>
  repo.find(merchantId).pipe(
    Effect.flatMap((settings) => settings === undefined ? Effect.fail(new NotFound({ error: "Checkout configuration not found" })) : Effect.succeed(settings))
  )

type PutPayload = HandlerRequest<typeof CheckoutSettingsGroup, "put">["payload"]

const methodInputs = (payload: PutPayload): Array<MethodInput> =>
  payload.paymentMethods.map((method) => ({
    network: method.network,
    assetCode: method.assetCode,
    railType: method.railType,
    enabled: method.enabled ?? true,
    isDefault: method.isDefault ?? false,
    recipientAddress: method.recipientAddress ?? null,
    xpub: method.xpub ?? null
  }))

/** The request's own problems (400): timing, the methods themselves, a public wallet, a token contract changed. */
const invalidPut = (context: Settings, payload: PutPayload, methods: ReadonlyArray<MethodInput>) =>
  Effect.gen(function*() {
    const { config, rails } = context
    const timingProblem = timingOverrideProblem(payload.paymentTiming)
    if (timingProblem !== undefined) return yield* new BadRequest({ error: `paymentTiming.${timingProblem.field} ${timingProblem.constraint}` })
    const problem = validateMethods(methods, (method) => method.assetCode === "BTC" || tokenContractOf(rails.settings, method.network, method.assetCode) !== undefined)
    if (problem !== undefined) return yield* new BadRequest({ error: problem })
    const publicWallet = config.env === "production" ? publicWalletProblem(methods) : undefined
    if (publicWallet !== undefined) return yield* new BadRequest({ error: publicWallet })
    const changedToken = payload.paymentMethods.findIndex((method) => method.tokenContract !== undefined && method.tokenContract !== tokenContract(context, method))
    if (changedToken !== -1) {
      return yield* new BadRequest({
        error: `paymentMethods[${changedToken}].tokenContract is set by the deployment (CHECKOUT_TOKEN_<NETWORK>_<ASSET>) and cannot be changed here`
      })
    }
  })

/** What this deployment cannot offer (409): a wallet-contract rail without a factory, a network it does not watch. */
const unavailablePut = (context: Settings, methods: ReadonlyArray<MethodInput>) =>
  Effect.gen(function*() {
    const noFactory = methods.find((method) => method.enabled && method.railType === "wallet_contract" && !context.rails.isAvailable({ ...method, id: "" }))
    if (noFactory !== undefined) {
      return yield* new Conflict({
        error:
          `Wallet-contract payments on ${noFactory.network} cannot be enabled: no forwarder factory is configured (CHECKOUT_FORWARDER_FACTORY_${noFactory.network.toUpperCase()})`
      })
    }
    const unwatched = unwatchedNetwork(context, methods)
    if (unwatched !== undefined) {
      const setting = endpointVariable(unwatched)
      return yield* new Conflict({ error: `Payment methods on ${unwatched} cannot be enabled: this deployment does not watch ${unwatched} (${setting} is not set)` })
    }
  })

const put = (context: Settings) => ({ payload }: { readonly payload: PutPayload }) =>
  Effect.gen(function*() {
    const merchant = yield* CurrentMerchant
    const methods = methodInputs(payload)
    yield* invalidPut(context, payload, methods)
    const timing = timingFromOverride(payload.paymentTiming)
    yield* unavailablePut(context, methods)
    yield* context.repo.save(merchant.merchantId, { issuedBy: payload.issuedBy ?? null, timing, methods })
    return view(context)(yield* Effect.orDie(current(context, merchant.merchantId)))
  })

export const CheckoutSettingsHttpLive = HttpApiBuilder.group(checkoutApi(CheckoutSettingsGroup), "checkoutSettings", (handlers) =>
  Effect.map(settingsContext, (context) =>
    handlers
      .handle("get", () => Effect.flatMap(CurrentMerchant, (merchant) => Effect.map(current(context, merchant.merchantId), view(context))))
      .handle("put", put(context))))
