import { Context, Effect, Layer } from "effect"
import { AppConfig, type RailConfig } from "../config/AppConfig.ts"
import { checksumAddress, type Hex } from "./EvmAddress.ts"
import { CANONICAL_FACTORY } from "./Forwarders.ts"
import { DEFAULT_CONFIRMATIONS, DEFAULT_TOKENS, EVM_NETWORKS, type EvmNetwork, isEvm, type Network, NETWORKS } from "./Networks.ts"
import { type PaymentMethod, type RailSettings, tokenContractOf } from "./PaymentMethod.ts"

/** The rails' settings: the configured tokens, confirmations and factories over the canonical defaults. */
export const railSettingsOf = (config: RailConfig, servicePrefix: string, production: boolean): RailSettings => {
  const tokens: Record<string, string> = { ...DEFAULT_TOKENS, ...config.tokens }
  const confirmations = Object.fromEntries(NETWORKS.map((network) => [network, config.confirmations[network] ?? DEFAULT_CONFIRMATIONS[network]])) as Record<Network, number>
  // Production uses only the factories it is given; elsewhere every network defaults to the
  // address where `npm run cli -- evm deploy-factory` deploys it.
  const factories: Partial<Record<EvmNetwork, Hex>> = {}
  for (const network of EVM_NETWORKS) {
    const configured = config.forwarderFactories[network]
    if (configured !== undefined) factories[network] = checksumAddress(configured)
    else if (!production) factories[network] = CANONICAL_FACTORY
  }
  return { tokens, testTokens: config.testTokens ?? {}, confirmations, forwarder: { factories }, servicePrefix }
}

export class RailSettingsService extends Context.Service<RailSettingsService, {
  readonly settings: RailSettings
  /** A method is available when the deployment knows its token contract (or it is BTC) and, for wallet contracts, the network's factory. */
  readonly isAvailable: (method: PaymentMethod) => boolean
}>()("Payments/RailSettings") {
  static readonly make = (settings: RailSettings) =>
    Layer.succeed(RailSettingsService, {
      settings,
      isAvailable: (method) =>
        method.assetCode === "BTC" ||
        (tokenContractOf(settings, method.network, method.assetCode) !== undefined &&
          (method.railType !== "wallet_contract" || (isEvm(method.network) && settings.forwarder.factories[method.network] !== undefined)))
    })

  /** The deployment's settings (token contracts, confirmations, forwarder factories, memo prefix). */
  static readonly layer = Layer.unwrap(
    Effect.map(AppConfig, ({ servicePrefix, env, rails }) => RailSettingsService.make(railSettingsOf(rails, servicePrefix, env === "production")))
  )
}
