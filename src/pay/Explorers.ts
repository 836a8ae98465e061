import { type Network, NETWORKS } from "../payments/Networks.ts"

/**
 * The public block explorer the payment page links a transaction to, per network: a URL template
 * where `{tx}` stands for the transaction hash (or Solana signature).
 */
export type Explorers = Readonly<Record<Network, string>>

/** Mainnet explorers, used for every network whose variable is unset. */
export const DEFAULT_EXPLORERS: Explorers = {
  ethereum: "https://etherscan.io/tx/{tx}",
  arbitrum: "https://arbiscan.io/tx/{tx}",
  base: "https://basescan.org/tx/{tx}",
  solana: "https://solscan.io/tx/{tx}",
  bitcoin: "https://mempool.space/tx/{tx}"
}

/**
 * The explorers of a deployment: the configured ones (`CHECKOUT_EXPLORER_URL_<NETWORK>`, checked
 * at start: an http(s) template with `{tx}`, such as `https://solscan.io/tx/{tx}?cluster=devnet`,
 * or a site root that `/tx/<hash>` is appended to, such as `https://sepolia.etherscan.io`) over the
 * defaults above.
 */
export const explorersOf = (configured: Partial<Readonly<Record<Network, string>>>): Explorers => {
  const explorers: Record<string, string> = { ...DEFAULT_EXPLORERS }
  for (const network of NETWORKS) {
    const value = configured[network]
    if (value !== undefined) explorers[network] = value.includes("{tx}") ? value : `${value.replace(/\/+$/, "")}/tx/{tx}`
  }
  return explorers as Explorers
}

/** The explorer page of a transaction, or undefined for a network without an explorer. */
export const transactionUrl = (explorers: Explorers, network: string, hash: string): string | undefined => {
  const template = (explorers as Readonly<Record<string, string>>)[network]
  return template === undefined ? undefined : template.replace("{tx}", encodeURIComponent(hash))
}
