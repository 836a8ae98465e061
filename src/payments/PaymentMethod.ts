import type { Hex } from "./EvmAddress.ts"
import type { AssetCode, EvmNetwork, Network } from "./Networks.ts"

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
export interface RailSettings {
  /** Token contract or mint by `<network>:<asset>`. */
  readonly tokens: Readonly<Record<string, string>>
  readonly confirmations: Readonly<Record<Network, number>>
  /** The wallet-contract rail's CREATE2 factory per EVM network (absent: the rail is unavailable there). */
  readonly forwarder: { readonly factories: Partial<Record<EvmNetwork, Hex>> }
  readonly servicePrefix: string
}

export const tokenContractOf = (settings: RailSettings, network: Network, assetCode: AssetCode): string | undefined => settings.tokens[`${network}:${assetCode}`]
