import { Context, Effect, Layer } from "effect"
import { AppConfig, type RailConfig } from "../config/AppConfig.ts"
import { checksumAddress, type Hex } from "./EvmAddress.ts"
import { CANONICAL_FACTORY } from "./Forwarders.ts"
import { DEFAULT_CONFIRMATIONS, DEFAULT_TOKENS, EVM_NETWORKS, type EvmNetwork, type Network, NETWORKS } from "./Networks.ts"
import type { RailSettingsShape } from "./PaymentMethod.ts"

/** The rails' settings: the configured tokens, confirmations and factories over the canonical defaults. */
export const railSettingsOf = (config: RailConfig, servicePrefix: string, production: boolean): RailSettingsShape => {
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

/** The deployment's rail settings (token contracts, confirmations, forwarder factories, memo prefix), as plain data. */
export class RailSettings extends Context.Service<RailSettings, RailSettingsShape>()("Payments/RailSettings") {
  static readonly make = (settings: RailSettingsShape) => Layer.succeed(RailSettings, settings)

  static readonly layer = Layer.unwrap(
    Effect.map(AppConfig, ({ servicePrefix, env, rails }) => RailSettings.make(railSettingsOf(rails, servicePrefix, env === "production")))
  )
}
