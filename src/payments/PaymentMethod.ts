import type { Hex } from "./EvmAddress.ts"
import { type AssetCode, type EvmNetwork, isEvm, type Network } from "./Networks.ts"

export interface PaymentMethod {
  readonly id: string
  readonly network: Network
  readonly assetCode: AssetCode
  readonly railType: "wallet_contract" | "address_transfer"
  readonly isDefault: boolean
  readonly recipientAddress: string | null
  readonly xpub: string | null
}

/** The deployment's rail settings, as plain data so that they can travel to a worker thread. */
export interface RailSettingsShape {
  /** Token contract or mint by `<network>:<asset>`. */
  readonly tokens: Readonly<Record<string, string>>
  /** Testnet token contract or mint by `<network>:<asset>` (CHECKOUT_TEST_TOKEN_<NETWORK>_<ASSET>), for test invoices. */
  readonly testTokens?: Readonly<Record<string, string>> | undefined
  readonly confirmations: Readonly<Record<Network, number>>
  /** The wallet-contract rail's CREATE2 factory per EVM network (absent: the rail is unavailable there). */
  readonly forwarder: { readonly factories: Partial<Record<EvmNetwork, Hex>> }
  readonly servicePrefix: string
}

export const tokenContractOf = (settings: RailSettingsShape, network: Network, assetCode: AssetCode): string | undefined => settings.tokens[`${network}:${assetCode}`]

/**
 * A test invoice's token: the testnet one where configured, else the live one (such an option is
 * paid only through the test helpers and the payer page's simulation; its URI names the testnet).
 */
export const testTokenContractOf = (settings: RailSettingsShape, network: Network, assetCode: AssetCode): string | undefined =>
  settings.testTokens?.[`${network}:${assetCode}`] ?? tokenContractOf(settings, network, assetCode)

/** A method is available when the deployment knows its token contract (or it is BTC) and, for wallet contracts, the network's factory. */
export const isMethodAvailable = (settings: RailSettingsShape, method: PaymentMethod): boolean =>
  method.assetCode === "BTC" ||
  (tokenContractOf(settings, method.network, method.assetCode) !== undefined &&
    (method.railType !== "wallet_contract" || (isEvm(method.network) && settings.forwarder.factories[method.network] !== undefined)))
