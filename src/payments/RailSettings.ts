import { Context, Layer } from "effect"
import { checksumAddress, type Hex, isEvmAddress } from "./EvmAddress.ts"
import { CANONICAL_FACTORY } from "./Forwarders.ts"
import { DEFAULT_CONFIRMATIONS, DEFAULT_TOKENS, EVM_NETWORKS, type EvmNetwork, isEvm, type Network, NETWORKS } from "./Networks.ts"
import { type PaymentMethod, type RailSettings, tokenContractOf } from "./PaymentMethod.ts"

type Env = Readonly<Record<string, string | undefined>>

export const railSettingsFromEnv = (env: Env, servicePrefix: string, production = env.CHECKOUT_ENV === "production"): RailSettings => {
  const tokens: Record<string, string> = { ...DEFAULT_TOKENS }
  for (const [key, value] of Object.entries(env)) {
    const match = /^CHECKOUT_TOKEN_([A-Z]+)_([A-Z]+)$/.exec(key)
    if (match !== null && value !== undefined && value !== "") tokens[`${match[1].toLowerCase()}:${match[2]}`] = value
  }
  const confirmations = Object.fromEntries(
    NETWORKS.map((network) => {
      const value = env[`CHECKOUT_CONFIRMATIONS_${network.toUpperCase()}`]
      return [network, value === undefined || value === "" ? DEFAULT_CONFIRMATIONS[network] : Number(value)]
    })
  ) as Record<Network, number>
  // Production uses only the factories it is given; elsewhere every network defaults to the
  // address where `npm run cli -- evm deploy-factory` deploys it.
  const factories: Partial<Record<EvmNetwork, Hex>> = {}
  for (const network of EVM_NETWORKS) {
    const name = `CHECKOUT_FORWARDER_FACTORY_${network.toUpperCase()}`
    const configured = env[name]
    if (configured !== undefined && configured !== "") {
      if (!isEvmAddress(configured, { strict: false })) throw new Error(`${name} must be an EVM address`)
      factories[network] = checksumAddress(configured)
    } else if (!production) {
      factories[network] = CANONICAL_FACTORY
    }
  }
  return { tokens, confirmations, forwarder: { factories }, servicePrefix }
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
}
