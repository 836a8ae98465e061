import { Schema } from "effect"

export const Network = Schema.Literals(["bitcoin", "ethereum", "arbitrum", "base", "solana"])
export type Network = typeof Network.Type
export const AssetCode = Schema.Literals(["USDT", "USDC", "BTC"])
export type AssetCode = typeof AssetCode.Type
export type EvmNetwork = "ethereum" | "arbitrum" | "base"

export const NETWORKS: ReadonlyArray<Network> = ["bitcoin", "ethereum", "arbitrum", "base", "solana"]
export const EVM_NETWORKS: ReadonlyArray<EvmNetwork> = ["ethereum", "arbitrum", "base"]
export const EVM_CHAIN_IDS: Record<EvmNetwork, number> = { ethereum: 1, arbitrum: 42161, base: 8453 }
/** The testnets test invoices are payable on (issue #55): sepolia, arbitrum sepolia, base sepolia. */
export const EVM_TEST_CHAIN_IDS: Record<EvmNetwork, number> = { ethereum: 11155111, arbitrum: 421614, base: 84532 }
/** The chain id a payment URI names: the network's own for a live invoice, its testnet's for a test invoice. */
export const chainIdOf = (network: EvmNetwork, livemode: boolean): number => (livemode ? EVM_CHAIN_IDS : EVM_TEST_CHAIN_IDS)[network]

export const isEvm = (network: Network): network is EvmNetwork => network === "ethereum" || network === "arbitrum" || network === "base"

/** Canonical mainnet token contracts and mints; each can be overridden by deployment configuration. */
export const DEFAULT_TOKENS: Readonly<Record<string, string>> = {
  "ethereum:USDC": "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
  "ethereum:USDT": "0xdAC17F958D2ee523a2206206994597C13D831ec7",
  "arbitrum:USDC": "0xaf88d065e77c8cC2239327C5EDb3A432268e5831",
  "arbitrum:USDT": "0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9",
  "base:USDC": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
  "solana:USDC": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
  "solana:USDT": "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"
}

export const DECIMALS: Readonly<Record<AssetCode, number>> = { USDT: 6, USDC: 6, BTC: 8 }

export const DEFAULT_CONFIRMATIONS: Readonly<Record<Network, number>> = {
  bitcoin: 2,
  ethereum: 12,
  arbitrum: 20,
  base: 20,
  solana: 32
}

/** Which assets and rails each network supports. */
export const SUPPORTED_METHODS: ReadonlyArray<{ network: Network; assetCode: AssetCode; railType: "wallet_contract" | "address_transfer" }> = [
  { network: "bitcoin", assetCode: "BTC", railType: "address_transfer" },
  ...EVM_NETWORKS.flatMap((network) =>
    (["USDT", "USDC"] as const).flatMap((assetCode) => (["wallet_contract", "address_transfer"] as const).map((railType) => ({ network, assetCode, railType })))
  ),
  { network: "solana", assetCode: "USDT", railType: "address_transfer" },
  { network: "solana", assetCode: "USDC", railType: "address_transfer" }
]
