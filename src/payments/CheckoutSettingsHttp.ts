import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentMerchant } from "../http/CurrentMerchant.ts"
import { watchedNetworks } from "./WatchedNetworks.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { checkoutApi } from "../http/CheckoutApi.ts"
import { CheckoutSettingsGroup } from "./CheckoutSettingsApi.ts"
import { CheckoutSettingsErrors } from "./CheckoutSettingsApi.ts"
import { timingFromOverride } from "../domain/TimingOverride.ts"
import { paymentTimingChecked } from "../http/TimingRules.ts"
import { type CheckoutSettings, CheckoutSettingsRepo, type MethodInput } from "./CheckoutSettingsRepo.ts"
import { validateMethods } from "./MethodValidation.ts"
import { embedOriginsProblem } from "./EmbedOrigins.ts"
import { publicWalletProblem } from "./PublicWallets.ts"
import { tokenContractOf } from "./PaymentMethod.ts"
import { RailSettingsService } from "./RailSettings.ts"
import { endpointVariable } from "../config/EndpointVariables.ts"

/** A payment method as the request sent it: a tokenContract, when sent, must be the deployment's. */
type SentMethod = Pick<MethodInput, "network" | "assetCode"> & { readonly tokenContract?: string | null | undefined }

export const CheckoutSettingsHttpLive = HttpApiBuilder.group(checkoutApi(CheckoutSettingsGroup), "checkoutSettings", (handlers) =>
  Effect.gen(function*() {
    const repo = yield* CheckoutSettingsRepo
    const rails = yield* RailSettingsService
    const config = yield* AppConfig
    const watched = watchedNetworks(config.chains)
    // In production nothing but a chain watcher can see a payment: a network without one cannot be offered.
    const unwatchedNetwork = (methods: ReadonlyArray<MethodInput>) =>
      config.env === "production" ? methods.find((method) => method.enabled && !watched.includes(method.network))?.network : undefined

    const tokenContract = (method: Pick<MethodInput, "network" | "assetCode">) =>
      method.assetCode === "BTC" ? null : tokenContractOf(rails.settings, method.network, method.assetCode) ?? null

    const view = (settings: CheckoutSettings) => ({
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
        tokenContract: tokenContract(method)
      })),
      embedOrigins: settings.embedOrigins
    })

    const current = (merchantId: string) =>
      repo.find(merchantId).pipe(
        Effect.flatMap((settings) => settings === undefined ? Effect.fail(CheckoutSettingsErrors.notFound()) : Effect.succeed(settings))
      )

    /** The first reason to refuse these methods, in the order the spec checks them; undefined when they can be saved. */
    const refusal = (methods: ReadonlyArray<MethodInput>, sent: ReadonlyArray<SentMethod>) => {
      const problem = validateMethods(methods, (method) => method.assetCode === "BTC" || tokenContractOf(rails.settings, method.network, method.assetCode) !== undefined)
        ?? (config.env === "production" ? publicWalletProblem(methods) : undefined)
      if (problem !== undefined) return CheckoutSettingsErrors.invalidMethod(problem)
      const changedToken = sent.findIndex((method) => method.tokenContract !== undefined && method.tokenContract !== tokenContract(method))
      if (changedToken !== -1) return CheckoutSettingsErrors.tokenContractFixed(changedToken)
      const noFactory = methods.find((method) => method.enabled && method.railType === "wallet_contract" && !rails.isAvailable({ ...method, id: "" }))
      if (noFactory !== undefined) return CheckoutSettingsErrors.noForwarderFactory(noFactory.network)
      const unwatched = unwatchedNetwork(methods)
      return unwatched === undefined ? undefined : CheckoutSettingsErrors.networkNotWatched(unwatched, endpointVariable(unwatched))
    }

    return handlers
      .handle("get", () => Effect.flatMap(CurrentMerchant, (merchant) => Effect.map(current(merchant.merchantId), view)))
      .handle("put", ({ payload }) =>
        Effect.gen(function*() {
          const merchant = yield* CurrentMerchant
          yield* paymentTimingChecked(payload.paymentTiming)
          const timing = timingFromOverride(payload.paymentTiming)
          const methods: Array<MethodInput> = payload.paymentMethods.map((method) => ({
            network: method.network,
            assetCode: method.assetCode,
            railType: method.railType,
            enabled: method.enabled ?? true,
            isDefault: method.isDefault ?? false,
            recipientAddress: method.recipientAddress ?? null,
            xpub: method.xpub ?? null
          }))
          const refused = refusal(methods, payload.paymentMethods)
          if (refused !== undefined) return yield* refused
          const originsProblem = payload.embedOrigins === undefined ? undefined : embedOriginsProblem(payload.embedOrigins, config.env === "production")
          if (originsProblem !== undefined) return yield* CheckoutSettingsErrors.invalidEmbedOrigins(originsProblem)
          yield* repo.save(merchant.merchantId, { issuedBy: payload.issuedBy ?? null, timing, methods, embedOrigins: payload.embedOrigins })
          return view(yield* Effect.orDie(current(merchant.merchantId)))
        }))
  }))
