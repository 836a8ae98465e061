import { Context, Layer } from "effect"
import { type Hex, isAddress, keccak256, toHex } from "viem"
import { DEFAULT_CONFIRMATIONS, DEFAULT_TOKENS, type Network, NETWORKS } from "./Networks.ts"
import { type PaymentMethod, type RailSettings, tokenContractOf } from "./OptionBuilder.ts"

/**
 * Placeholder forwarder factory and init code hash used until a deployment configures its own
 * (CHECKOUT_FORWARDER_FACTORY, CHECKOUT_FORWARDER_INIT_CODE_HASH). Addresses predicted from them
 * are deterministic but no real factory exists behind them: demo only.
 */
export const DEMO_FORWARDER_FACTORY: Hex = "0x00000000000000000000000000000000000DE110"
export const DEMO_FORWARDER_INIT_CODE_HASH: Hex = keccak256(toHex("checkout-demo-forwarder-v1"))

type Env = Readonly<Record<string, string | undefined>>

export const railSettingsFromEnv = (env: Env, servicePrefix: string): RailSettings => {
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
  const factory = (env.CHECKOUT_FORWARDER_FACTORY ?? DEMO_FORWARDER_FACTORY) as Hex
  const initCodeHash = (env.CHECKOUT_FORWARDER_INIT_CODE_HASH ?? DEMO_FORWARDER_INIT_CODE_HASH) as Hex
  if (!isAddress(factory)) throw new Error("CHECKOUT_FORWARDER_FACTORY must be an EVM address")
  if (!/^0x[0-9a-fA-F]{64}$/.test(initCodeHash)) throw new Error("CHECKOUT_FORWARDER_INIT_CODE_HASH must be a 32-byte hex value")
  return { tokens, confirmations, forwarder: { factory, initCodeHash }, servicePrefix }
}

export class RailSettingsService extends Context.Service<RailSettingsService, {
  readonly settings: RailSettings
  /** A method is available when the deployment knows its token contract (or it is BTC). */
  readonly isAvailable: (method: PaymentMethod) => boolean
}>()("Payments/RailSettings") {
  static readonly make = (settings: RailSettings) =>
    Layer.succeed(RailSettingsService, {
      settings,
      isAvailable: (method) => method.assetCode === "BTC" || tokenContractOf(settings, method.network, method.assetCode) !== undefined
    })
}
