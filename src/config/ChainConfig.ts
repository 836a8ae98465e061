import { Config, type Redacted } from "effect"
import { check, isUrlWith, listEntries, type Env, type Reader } from "./ConfigReader.ts"
import { endpointVariable, testEndpointVariable } from "./EndpointVariables.ts"

export type WatchedNetwork = "bitcoin" | "ethereum" | "arbitrum" | "base" | "solana"
export type EvmNetworkName = "ethereum" | "arbitrum" | "base"

/** Where each network's watcher reads the chain; a network without an endpoint has no watcher. */
export interface ChainWatchSettings {
  /** JSON-RPC URL (EVM, solana) or Esplora base URL (bitcoin) of each watched network: the first (preferred) one listed. */
  readonly endpoints: Partial<Record<WatchedNetwork, string>>
  /** Every endpoint listed for each watched network, preferred first (the watcher fails over between them). */
  readonly endpointLists: Partial<Record<WatchedNetwork, ReadonlyArray<string>>>
  /**
   * The testnet endpoints of each network with a testnet watcher (test invoices only), preferred
   * first: sepolia, arbitrum sepolia, base sepolia, Solana devnet, bitcoin signet
   * (CHECKOUT_TEST_RPC_URL_<NETWORK>, CHECKOUT_TEST_ESPLORA_URL).
   */
  readonly testEndpointLists?: Partial<Record<WatchedNetwork, ReadonlyArray<string>>> | undefined
  /** Blocks (slots) an endpoint's head may be behind the others' highest before the watcher stops using it. */
  readonly maxEndpointLag: Record<WatchedNetwork, number>
  /** How long an endpoint a majority contradicted about a transfer is not read from (EVM, bitcoin). */
  readonly endpointQuarantineMs?: number | undefined
  /** How long a transfer may wait for corroboration before a warning log names it (10 minutes). */
  readonly corroborationWarningMs?: number | undefined
  readonly pollIntervalMs: Record<WatchedNetwork, number>
  /** Largest block range of one eth_getLogs request (halved on a provider's range error). */
  readonly evmMaxLogRange: number
  /** Per-request time-out of chain RPC calls. */
  readonly rpcTimeoutMs: number
  /** How long after an invoice's payable window its addresses stay watched (late payments). */
  readonly watchRetentionDays: number
  /** Secret key of the account that deploys and flushes forwarders (gas paid by it); unset: no sweeps. */
  readonly evmRelayerKey: Redacted.Redacted<string> | undefined
  readonly forwarderSweepIntervalMs: number
  /** Up to this many payable bitcoin addresses the mempool is read per address; above, by a txid diff. */
  readonly bitcoinMempoolAddressLimit: number
}

/** The payment rails' deployment settings as configured; `payments/RailSettings.ts` applies the defaults. */
export interface RailConfig {
  /** Token contract or mint per `network:ASSET`, only those configured (the canonical ones are defaults). */
  readonly tokens: Readonly<Record<string, string>>
  /** Testnet token contract or mint per `network:ASSET` (CHECKOUT_TEST_TOKEN_<NETWORK>_<ASSET>), for test invoices' options. */
  readonly testTokens?: Readonly<Record<string, string>> | undefined
  /** Required confirmations per network, only those configured. */
  readonly confirmations: Partial<Record<WatchedNetwork, number>>
  /** ForwarderFactory address per EVM network, only those configured. */
  readonly forwarderFactories: Partial<Record<EvmNetworkName, string>>
}

const WATCHED_NETWORKS: ReadonlyArray<WatchedNetwork> = ["bitcoin", "ethereum", "arbitrum", "base", "solana"]
const EVM_NETWORK_NAMES: ReadonlyArray<EvmNetworkName> = ["ethereum", "arbitrum", "base"]
const TOKEN_ASSETS = ["USDT", "USDC"] as const
const DEFAULT_POLL_MS: Record<WatchedNetwork, number> = { bitcoin: 15_000, ethereum: 4_000, arbitrum: 1_000, base: 2_000, solana: 1_000 }

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/
const SOLANA_KEY = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/

const DEFAULT_MAX_ENDPOINT_LAG: Record<WatchedNetwork, number> = { bitcoin: 1, ethereum: 3, arbitrum: 20, base: 10, solana: 50 }

/** A comma-separated list of http(s) URLs (a comma inside one written as %2C), without trailing slashes. */
export const urlList = (read: Reader, name: string, family?: string): ReadonlyArray<string> | undefined =>
  read.custom(
    name,
    Config.schema(check((value) => listEntries(value).length > 0 && listEntries(value).every(isUrlWith(["http:", "https:"]))), name).pipe(
      Config.map((value) => listEntries(value).map((url) => url.replace(/\/+$/, ""))),
      Config.option,
      Config.map((value) => (value._tag === "Some" ? value.value : undefined))
    ),
    "must be a comma-separated list of URLs starting with http: or https:",
    undefined,
    family
  )

export const chainWatchSettings = (read: Reader): ChainWatchSettings => {
  const endpoints: Partial<Record<WatchedNetwork, string>> = {}
  const endpointLists: Partial<Record<WatchedNetwork, ReadonlyArray<string>>> = {}
  const testEndpointLists: Partial<Record<WatchedNetwork, ReadonlyArray<string>>> = {}
  for (const network of WATCHED_NETWORKS) {
    const list = urlList(read, endpointVariable(network), network === "bitcoin" ? undefined : "CHECKOUT_RPC_URL_<NETWORK>")
    if (list !== undefined) {
      endpoints[network] = list[0]
      endpointLists[network] = list
    }
    const testList = urlList(read, testEndpointVariable(network), network === "bitcoin" ? undefined : "CHECKOUT_TEST_RPC_URL_<NETWORK>")
    if (testList !== undefined) testEndpointLists[network] = testList
  }
  const maxEndpointLag = Object.fromEntries(WATCHED_NETWORKS.map((network) => [
    network,
    read.integer(`CHECKOUT_MAX_ENDPOINT_LAG_${network.toUpperCase()}`, DEFAULT_MAX_ENDPOINT_LAG[network], 0, 1_000_000, "CHECKOUT_MAX_ENDPOINT_LAG_<NETWORK>")
  ])) as Record<WatchedNetwork, number>
  const pollIntervalMs = Object.fromEntries(WATCHED_NETWORKS.map((network) => [
    network,
    read.integer(`CHECKOUT_POLL_INTERVAL_MS_${network.toUpperCase()}`, DEFAULT_POLL_MS[network], 50, 3_600_000, "CHECKOUT_POLL_INTERVAL_MS_<NETWORK>")
  ])) as Record<WatchedNetwork, number>
  return {
    endpoints,
    endpointLists,
    testEndpointLists,
    maxEndpointLag,
    endpointQuarantineMs: read.integer("CHECKOUT_ENDPOINT_QUARANTINE_MS", 600_000, 1_000, 86_400_000),
    corroborationWarningMs: read.integer("CHECKOUT_CORROBORATION_WARNING_MS", 600_000, 1_000, 86_400_000),
    pollIntervalMs,
    evmMaxLogRange: read.integer("CHECKOUT_EVM_MAX_LOG_RANGE", 2_000, 1, 1_000_000),
    rpcTimeoutMs: read.integer("CHECKOUT_RPC_TIMEOUT_MS", 10_000, 100, 300_000),
    watchRetentionDays: read.integer("CHECKOUT_WATCH_RETENTION_DAYS", 30, 0, 3_650),
    evmRelayerKey: read.secret("CHECKOUT_EVM_RELAYER_KEY", /^0x[0-9a-fA-F]{64}$/, "must be a 32-byte hex private key (0x followed by 64 hex digits)"),
    forwarderSweepIntervalMs: read.integer("CHECKOUT_FORWARDER_SWEEP_INTERVAL_MS", 15_000, 100, 3_600_000),
    bitcoinMempoolAddressLimit: read.integer("CHECKOUT_BITCOIN_MEMPOOL_ADDRESS_LIMIT", 50, 0, 1_000_000)
  }
}

export const railConfig = (read: Reader, env: Env): RailConfig => {
  const tokens: Record<string, string> = {}
  const testTokens: Record<string, string> = {}
  for (const network of WATCHED_NETWORKS.filter((candidate) => candidate !== "bitcoin")) {
    const evm = network !== "solana"
    for (const asset of TOKEN_ASSETS) {
      const token = read.matching(
        `CHECKOUT_TOKEN_${network.toUpperCase()}_${asset}`,
        evm ? EVM_ADDRESS : SOLANA_KEY,
        evm ? "must be an EVM contract address (0x followed by 40 hex digits)" : "must be a Solana mint address (base58)",
        "CHECKOUT_TOKEN_<NETWORK>_<ASSET>"
      )
      if (token !== undefined) tokens[`${network}:${asset}`] = token
      const testToken = read.matching(
        `CHECKOUT_TEST_TOKEN_${network.toUpperCase()}_${asset}`,
        evm ? EVM_ADDRESS : SOLANA_KEY,
        evm ? "must be an EVM contract address (0x followed by 40 hex digits)" : "must be a Solana mint address (base58)",
        "CHECKOUT_TEST_TOKEN_<NETWORK>_<ASSET>"
      )
      if (testToken !== undefined) testTokens[`${network}:${asset}`] = testToken
    }
  }
  // A token variable of a network or asset the service does not know is a typo: say so.
  for (const name of Object.keys(env)) {
    if (/^CHECKOUT_TOKEN_/.test(name) && env[name] !== "" && !read.declared.some((entry) => entry.name === name) &&
      !/^CHECKOUT_TOKEN_(ETHEREUM|ARBITRUM|BASE|SOLANA)_(USDT|USDC)$/.test(name))
    {
      read.problems.push(`${name} is not a token setting: use CHECKOUT_TOKEN_<NETWORK>_<ASSET> with a network of ethereum, arbitrum, base, solana and an asset of USDT, USDC`)
    }
  }
  const confirmations: Partial<Record<WatchedNetwork, number>> = {}
  for (const network of WATCHED_NETWORKS) {
    const name = `CHECKOUT_CONFIRMATIONS_${network.toUpperCase()}`
    const value = read.integer(name, 0, 1, 10_000, "CHECKOUT_CONFIRMATIONS_<NETWORK>")
    if (read.present(name) && value > 0) confirmations[network] = value
  }
  const forwarderFactories: Partial<Record<EvmNetworkName, string>> = {}
  for (const network of EVM_NETWORK_NAMES) {
    const factory = read.matching(`CHECKOUT_FORWARDER_FACTORY_${network.toUpperCase()}`, EVM_ADDRESS, "must be an EVM address (0x followed by 40 hex digits)",
      "CHECKOUT_FORWARDER_FACTORY_<NETWORK>")
    if (factory !== undefined) forwarderFactories[network] = factory
  }
  return { tokens, testTokens, confirmations, forwarderFactories }
}

const isExplorerUrl = (value: string) => isUrlWith(["http:", "https:"])(value.replace("{tx}", "0"))

export const explorerUrls = (read: Reader): Partial<Record<WatchedNetwork, string>> => {
  const urls: Partial<Record<WatchedNetwork, string>> = {}
  for (const network of WATCHED_NETWORKS) {
    const name = `CHECKOUT_EXPLORER_URL_${network.toUpperCase()}`
    const url = read.custom(
      name,
      Config.schema(check(isExplorerUrl), name).pipe(Config.option, Config.map((value) => value._tag === "Some" ? value.value.trim() : undefined)),
      "must be an http(s) URL, with {tx} where the transaction hash goes (for example https://basescan.org/tx/{tx})",
      undefined,
      "CHECKOUT_EXPLORER_URL_<NETWORK>"
    )
    if (url !== undefined) urls[network] = url
  }
  return urls
}
