import { Config, ConfigProvider, Context, Effect, Layer, Redacted, Result, Schema } from "effect"
import { IpNetwork } from "effect/net"
import { endpointVariable } from "./EndpointVariables.ts"

export type CheckoutEnv = "development" | "production" | "test"
export type Role = "api" | "workers" | "all"

export interface AppConfigShape {
  readonly env: CheckoutEnv
  readonly host: string
  readonly port: number
  readonly databaseUrl: string | undefined
  /** Pipelines the statements of concurrent requests on shared connections (PostgreSQL server only). */
  readonly databaseMultiplex: boolean
  readonly dataDir: string
  readonly publicUrl: string
  readonly role: Role
  readonly signup: "open" | "closed"
  readonly webhookAllowLoopback: boolean
  /** How often the webhook dispatcher looks for due work without being woken (PostgreSQL NOTIFY wakes it at once). */
  readonly webhookPollIntervalMs: number
  /**
   * A chain watcher leader checks its lock connection every third of this (and steps down when a
   * check fails or takes longer); a leader silent for this long is terminated by another instance.
   */
  readonly watcherLeaseMs: number
  /** Secrets are Redacted: a logged or printed configuration shows `<redacted>`, never the value. */
  readonly jwtSecret: Redacted.Redacted<string> | undefined
  readonly encryptionKey: Redacted.Redacted<string> | undefined
  /** Bearer token that `GET /metrics` requires; unset: open outside production, not served in production. */
  readonly metricsToken: Redacted.Redacted<string> | undefined
  readonly apiRateLimitPerMinute: number
  readonly solanaPrepareRateLimitPerMinute: number
  /** Refund requests (POST /api/checkout/pay/:id/refunds) per minute per client address. */
  readonly refundRequestRateLimitPerMinute: number
  readonly redisUrl: string | undefined
  readonly demo: boolean
  readonly sweepIntervalMs: number
  readonly maxBodyBytes: number
  readonly idempotencyTtlHours: number
  /** How long a running Idempotency-Key claim holds without renewal (renewed every third of it). */
  readonly idempotencyLeaseMs: number
  /** A request's time budget; past it the answer is 503 (a stalled database, most likely). */
  readonly requestTimeoutMs: number
  readonly databaseConnectTimeoutMs: number
  /** shared_buffers of the embedded PGlite (PostgreSQL syntax, e.g. 32MB). */
  readonly embeddedSharedBuffers: string
  /** PostgreSQL's statement_timeout for the service's connections (a PostgreSQL server only). */
  readonly databaseStatementTimeoutMs: number
  readonly servicePrefix: string
  readonly price: {
    readonly url: string | undefined
    readonly jsonPath: string
    readonly timestampPath: string | undefined
    readonly timeoutMs: number
    readonly maxAgeSeconds: number
    readonly fixedBtcUsd: string
    /** CHECKOUT_PRICE_URLS: BTC/USD sources (presets or custom), asked besides CHECKOUT_PRICE_URL when that is set. */
    readonly sources: ReadonlyArray<PriceSourceSpec>
    /** Fresh answers a quote needs; undefined: 2 when the asset has several sources, 1 when it has one. */
    readonly quorum: number | undefined
    /** Largest spread of the answers ((highest − lowest) / median), in parts per million. */
    readonly maxDeviationPpm: number
    readonly stablecoin: {
      /** How far from 1 USD a stablecoin's sources may put it before it is refused, in ppm; undefined: off (par, unchecked). */
      readonly depegThresholdPpm: number | undefined
      readonly sources: ReadonlyArray<StablecoinSourceSpec>
    }
  }
  readonly probeThreshold: number
  /** Worker threads for key derivation and QR codes; 0 runs them on the event loop. */
  readonly paymentWorkerThreads: number
  readonly loginAttemptsPerMinute: number
  /** Logins per minute from one client address (whatever the email). */
  readonly loginAddressAttemptsPerMinute: number
  /** Sign-ups per minute from one client address. */
  readonly signupsPerMinute: number
  /** How long a request waits for the rate-limit store before this instance decides alone. */
  readonly rateLimitStoreTimeoutMs: number
  /** Instances sharing the limits: while the store is unavailable each admits limit / instances. */
  readonly rateLimitInstances: number
  /** Dashboard, simulator and key-route requests per minute per account. */
  readonly dashboardRateLimitPerMinute: number
  /** Dashboard, simulator and key-route requests per minute per client address (before authentication). */
  readonly dashboardAddressRateLimitPerMinute: number
  /** `waitMs`: how long a login or sign-up waits for a free hashing slot before it is answered 429. */
  readonly passwords: { readonly logN: number; readonly concurrency: number; readonly waitMs: number }
  /** Proxies whose X-Forwarded-For is believed for the client address (CIDRs); none by default. */
  readonly trustedProxies: ReadonlyArray<string>
  readonly chains: ChainWatchSettings
  readonly rails: RailConfig
  /** The payment page's block explorer per network, where configured: a `{tx}` template or a site root. */
  readonly explorerUrls: Partial<Record<WatchedNetwork, string>>
}

export type WatchedNetwork = "bitcoin" | "ethereum" | "arbitrum" | "base" | "solana"
type EvmNetworkName = "ethereum" | "arbitrum" | "base"

/** Where each network's watcher reads the chain; a network without an endpoint has no watcher. */
export interface ChainWatchSettings {
  /** JSON-RPC URL (EVM, solana) or Esplora base URL (bitcoin) of each watched network: the first (preferred) one listed. */
  readonly endpoints: Partial<Record<WatchedNetwork, string>>
  /** Every endpoint listed for each watched network, preferred first (the watcher fails over between them). */
  readonly endpointLists: Partial<Record<WatchedNetwork, ReadonlyArray<string>>>
  /** Blocks (slots) an endpoint's head may be behind the others' highest before the watcher stops using it. */
  readonly maxEndpointLag: Record<WatchedNetwork, number>
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
  /** Required confirmations per network, only those configured. */
  readonly confirmations: Partial<Record<WatchedNetwork, number>>
  /** ForwarderFactory address per EVM network, only those configured. */
  readonly forwarderFactories: Partial<Record<EvmNetworkName, string>>
}

/** Public price APIs known by name (their endpoints and paths are in payments/PriceSources.ts). */
export const PRICE_PRESETS = ["coingecko", "coinbase", "kraken", "binance", "bitstamp"] as const
export type PricePreset = typeof PRICE_PRESETS[number]
/** The presets with USD markets for both USDT and USDC. */
export const STABLECOIN_PRICE_PRESETS = ["coingecko", "kraken", "bitstamp"] as const satisfies ReadonlyArray<PricePreset>
export type StablecoinAsset = "USDT" | "USDC"

/** A custom JSON price source: where the price is in its answer and, optionally, the answer's timestamp. */
export interface CustomPriceSource {
  readonly url: string
  readonly jsonPath: string
  readonly timestampPath: string | undefined
}
export type PriceSourceSpec = { readonly preset: PricePreset } | CustomPriceSource
export type StablecoinSourceSpec = { readonly preset: PricePreset } | (CustomPriceSource & { readonly asset: StablecoinAsset })

/** `url|jsonPath` or `url|jsonPath|timestampPath` (an http(s) URL; a comma in it written as %2C). */
const customPriceSource = (entry: string): CustomPriceSource | undefined => {
  const [url, jsonPath, timestampPath, ...rest] = entry.split("|").map((part) => part.trim())
  if (rest.length > 0 || !isUrlWith(["http:", "https:"])(url) || jsonPath === undefined || !/^[^\s.]+(\.[^\s.]+)*$/.test(jsonPath)) return undefined
  if (timestampPath !== undefined && timestampPath !== "" && !/^[^\s.]+(\.[^\s.]+)*$/.test(timestampPath)) return undefined
  return { url, jsonPath, timestampPath: timestampPath === undefined || timestampPath === "" ? undefined : timestampPath }
}

const listEntries = (value: string) => value.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "")

const priceSource = (entry: string): PriceSourceSpec | undefined =>
  (PRICE_PRESETS as ReadonlyArray<string>).includes(entry) ? { preset: entry as PricePreset } : customPriceSource(entry)

const stablecoinSource = (entry: string): StablecoinSourceSpec | undefined => {
  if ((STABLECOIN_PRICE_PRESETS as ReadonlyArray<string>).includes(entry)) return { preset: entry as PricePreset }
  const match = /^(USDT|USDC)=(.*)$/s.exec(entry)
  const custom = match === null ? undefined : customPriceSource(match[2])
  return custom === undefined ? undefined : { ...custom, asset: match![1] as StablecoinAsset }
}

const sourceList = <A>(parse: (entry: string) => A | undefined) => (value: string): ReadonlyArray<A> | undefined => {
  const parsed = listEntries(value).map(parse)
  return parsed.some((entry) => entry === undefined) ? undefined : parsed as ReadonlyArray<A>
}

/** A fraction such as 0.01 (at most 6 decimals) as parts per million, exactly; undefined when not a fraction in (0, 1]. */
const fractionToPpm = (text: string): number | undefined => {
  const match = /^(0|1)(?:\.(\d{1,6}))?$/.exec(text.trim())
  if (match === null) return undefined
  const ppm = Number(match[1]) * 1_000_000 + Number((match[2] ?? "").padEnd(6, "0"))
  return ppm > 0 && ppm <= 1_000_000 ? ppm : undefined
}

/** Every problem of a configuration, one line each naming its variable. */
export class ConfigError extends Error {
  override readonly name = "ConfigError"
  readonly problems: ReadonlyArray<string>
  constructor(problems: ReadonlyArray<string>) {
    super(problems.join("\n"))
    this.problems = problems
  }
}

type Env = Readonly<Record<string, string | undefined>>

/** A variable of the service: its name (or family, for one per network) and the rule its value follows. */
export interface Declared {
  readonly name: string
  readonly rule: string
}

const WATCHED_NETWORKS: ReadonlyArray<WatchedNetwork> = ["bitcoin", "ethereum", "arbitrum", "base", "solana"]
const EVM_NETWORK_NAMES: ReadonlyArray<EvmNetworkName> = ["ethereum", "arbitrum", "base"]
const TOKEN_ASSETS = ["USDT", "USDC"] as const
const DEFAULT_POLL_MS: Record<WatchedNetwork, number> = { bitcoin: 15_000, ethereum: 4_000, arbitrum: 1_000, base: 2_000, solana: 1_000 }

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/
const SOLANA_KEY = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/

const check = (predicate: (value: string) => boolean) => Schema.String.check(Schema.makeFilter(predicate))

const isUrlWith = (protocols: ReadonlyArray<string>) => (value: string) => {
  try {
    return protocols.includes(new URL(value).protocol)
  } catch {
    return false
  }
}

const isNetworkList = (value: string) =>
  value.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "").every((entry) =>
    Result.isSuccess(IpNetwork.fromString(entry.includes("/") ? entry : `${entry}/${entry.includes(":") ? 128 : 32}`))
  )

/**
 * Reads variables through Effect `Config` from one environment and keeps every problem instead of
 * stopping at the first: a bad value is reported (with its fallback used meanwhile, so that later
 * rules can still be checked) and the whole list is thrown at the end.
 */
const makeReader = (env: Env) => {
  const provider = ConfigProvider.fromEnv({ env: env as Record<string, string> })
  const problems: Array<string> = []
  const declared: Array<Declared> = []
  const present = (name: string) => env[name] !== undefined && env[name] !== ""

  const read = <A>(name: string, config: Config.Config<A>, rule: string, fallback: A, options: { readonly secret?: boolean; readonly family?: string } = {}): A => {
    declared.push({ name: options.family ?? name, rule })
    const result = Effect.runSync(Effect.result(config.parse(provider)))
    if (Result.isSuccess(result)) return result.success
    problems.push(options.secret === true ? `${name} ${rule}` : `${name} ${rule} (got "${env[name]}")`)
    return fallback
  }

  return {
    problems,
    declared,
    present,
    integer: (name: string, fallback: number, min: number, max: number, family?: string) =>
      read(name, Config.schema(Schema.Int.check(Schema.isBetween({ minimum: min, maximum: max })), name).pipe(Config.withDefault(fallback)),
        `must be an integer from ${min} to ${max}`, fallback, { family }),
    bool: (name: string, fallback: boolean) => read(name, Config.Boolean(name).pipe(Config.withDefault(fallback)), "must be true or false", fallback),
    oneOf: <const T extends string>(name: string, allowed: ReadonlyArray<T>, fallback: T): T =>
      read(name, Config.Literals(allowed, name).pipe(Config.withDefault(fallback)), `must be one of ${allowed.join(", ")}`, fallback),
    text: (name: string, fallback: string) => read(name, Config.String(name).pipe(Config.withDefault(fallback)), "must be text", fallback),
    url: (name: string, protocols: ReadonlyArray<string>, family?: string): string | undefined =>
      read(
        name,
        Config.schema(check(isUrlWith(protocols)), name).pipe(Config.map((value) => value.replace(/\/+$/, "")), Config.option,
          Config.map((value) => value._tag === "Some" ? value.value : undefined)),
        `must be a URL starting with ${protocols.join(" or ")}`,
        undefined,
        { family }
      ),
    matching: (name: string, pattern: RegExp, rule: string, family?: string): string | undefined =>
      read(name, Config.schema(check((value) => pattern.test(value)), name).pipe(Config.option, Config.map((value) => value._tag === "Some" ? value.value : undefined)), rule,
        undefined, {
        family
      }),
    secret: (name: string, pattern: RegExp, rule: string): Redacted.Redacted<string> | undefined =>
      read(name, Config.schema(check((value) =>
        pattern.test(value)
      ), name).pipe(Config.option, Config.map((value) => value._tag === "Some" ? Redacted.make(value.value) : undefined)), rule, undefined, {
        secret: true
      }),
    custom: <A>(name: string, config: Config.Config<A>, rule: string, fallback: A, family?: string) => read(name, config, rule, fallback, { family })
  }
}

type Reader = ReturnType<typeof makeReader>

const DEFAULT_MAX_ENDPOINT_LAG: Record<WatchedNetwork, number> = { bitcoin: 1, ethereum: 3, arbitrum: 20, base: 10, solana: 50 }

/** A comma-separated list of http(s) URLs (a comma inside one written as %2C), without trailing slashes. */
const urlList = (read: Reader, name: string, family?: string): ReadonlyArray<string> | undefined =>
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

const chainWatchSettings = (read: Reader): ChainWatchSettings => {
  const endpoints: Partial<Record<WatchedNetwork, string>> = {}
  const endpointLists: Partial<Record<WatchedNetwork, ReadonlyArray<string>>> = {}
  for (const network of WATCHED_NETWORKS) {
    const list = urlList(read, endpointVariable(network), network === "bitcoin" ? undefined : "CHECKOUT_RPC_URL_<NETWORK>")
    if (list !== undefined) {
      endpoints[network] = list[0]
      endpointLists[network] = list
    }
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
    maxEndpointLag,
    pollIntervalMs,
    evmMaxLogRange: read.integer("CHECKOUT_EVM_MAX_LOG_RANGE", 2_000, 1, 1_000_000),
    rpcTimeoutMs: read.integer("CHECKOUT_RPC_TIMEOUT_MS", 10_000, 100, 300_000),
    watchRetentionDays: read.integer("CHECKOUT_WATCH_RETENTION_DAYS", 30, 0, 3_650),
    evmRelayerKey: read.secret("CHECKOUT_EVM_RELAYER_KEY", /^0x[0-9a-fA-F]{64}$/, "must be a 32-byte hex private key (0x followed by 64 hex digits)"),
    forwarderSweepIntervalMs: read.integer("CHECKOUT_FORWARDER_SWEEP_INTERVAL_MS", 15_000, 100, 3_600_000),
    bitcoinMempoolAddressLimit: read.integer("CHECKOUT_BITCOIN_MEMPOOL_ADDRESS_LIMIT", 50, 0, 1_000_000)
  }
}

const railConfig = (read: Reader, env: Env): RailConfig => {
  const tokens: Record<string, string> = {}
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
  return { tokens, confirmations, forwarderFactories }
}

const isExplorerUrl = (value: string) => isUrlWith(["http:", "https:"])(value.replace("{tx}", "0"))

const explorerUrls = (read: Reader): Partial<Record<WatchedNetwork, string>> => {
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

const fraction = (read: Reader, name: string, fallback: string | undefined): number | undefined =>
  read.custom(
    name,
    Config.schema(check((value) => fractionToPpm(value) !== undefined), name).pipe(
      Config.option,
      Config.map((value) => fractionToPpm(value._tag === "Some" ? value.value : fallback ?? ""))
    ),
    "must be a fraction above 0 and at most 1 with at most 6 decimals (0.01 = 1%)",
    fallback === undefined ? undefined : fractionToPpm(fallback)
  )

/** The price sources of BTC (median, quorum, spread) and of the stablecoin peg guard. */
const priceSourcesConfig = (read: Reader) => {
  const presetNames = PRICE_PRESETS.join(", ")
  const sources = read.custom(
    "CHECKOUT_PRICE_URLS",
    Config.schema(check((value) => sourceList(priceSource)(value) !== undefined), "CHECKOUT_PRICE_URLS").pipe(
      Config.withDefault(""),
      Config.map((value) => sourceList(priceSource)(value) ?? [])
    ),
    `must be a comma-separated list of presets (${presetNames}) or url|jsonPath|timestampPath sources`,
    []
  )
  const quorum = read.integer("CHECKOUT_PRICE_QUORUM", 0, 1, 50)
  const maxDeviationPpm = fraction(read, "CHECKOUT_PRICE_MAX_DEVIATION", "0.01") ?? 10_000
  const depegThresholdPpm = fraction(read, "CHECKOUT_STABLECOIN_DEPEG_THRESHOLD", undefined)
  const stablecoinSources = read.custom(
    "CHECKOUT_STABLECOIN_PRICE_URLS",
    Config.schema(check((value) => sourceList(stablecoinSource)(value) !== undefined), "CHECKOUT_STABLECOIN_PRICE_URLS").pipe(
      Config.withDefault(""),
      Config.map((value) => sourceList(stablecoinSource)(value) ?? [])
    ),
    `must be a comma-separated list of presets (${STABLECOIN_PRICE_PRESETS.join(", ")}) or USDT=url|jsonPath|timestampPath, USDC=url|jsonPath|timestampPath sources`,
    []
  )
  const explicitQuorum = read.present("CHECKOUT_PRICE_QUORUM") && quorum > 0 ? quorum : undefined
  const btcCount = sources.length + (read.present("CHECKOUT_PRICE_URL") ? 1 : 0)
  if (explicitQuorum !== undefined && btcCount > 0 && explicitQuorum > btcCount) {
    read.problems.push(`CHECKOUT_PRICE_QUORUM is ${explicitQuorum} but only ${btcCount} BTC price source(s) are configured (CHECKOUT_PRICE_URLS, CHECKOUT_PRICE_URL)`)
  }
  if (depegThresholdPpm !== undefined) {
    for (const asset of ["USDT", "USDC"] as const) {
      const count = stablecoinSources.filter((source) => "preset" in source || source.asset === asset).length
      if (count === 0) {
        read.problems.push(`CHECKOUT_STABLECOIN_DEPEG_THRESHOLD needs price sources for ${asset} in CHECKOUT_STABLECOIN_PRICE_URLS`)
      } else if (explicitQuorum !== undefined && explicitQuorum > count) {
        read.problems.push(`CHECKOUT_PRICE_QUORUM is ${explicitQuorum} but only ${count} ${asset} price source(s) are configured (CHECKOUT_STABLECOIN_PRICE_URLS)`)
      }
    }
  }
  return {
    sources,
    quorum: explicitQuorum,
    maxDeviationPpm,
    stablecoin: { depegThresholdPpm, sources: stablecoinSources }
  }
}

const read = (env: Env): { readonly config: AppConfigShape; readonly problems: ReadonlyArray<string>; readonly declared: ReadonlyArray<Declared> } => {
  const r = makeReader(env)
  const checkoutEnv = r.oneOf<CheckoutEnv>("CHECKOUT_ENV", ["development", "production", "test"], "development")
  const production = checkoutEnv === "production"
  const host = r.text("HOST", "127.0.0.1")
  const port = r.integer("PORT", 3000, 0, 65535)
  const displayHost = host.includes(":") ? `[${host}]` : host === "0.0.0.0" ? "127.0.0.1" : host
  const publicUrl = r.url("CHECKOUT_PUBLIC_URL", ["http:", "https:"])
  const databaseUrl = r.url("DATABASE_URL", ["postgres:", "postgresql:"])
  const requestTimeoutMs = r.integer("CHECKOUT_REQUEST_TIMEOUT_MS", 10_000, 100, 600_000)
  const redisUrl = r.url("REDIS_URL", ["redis:", "rediss:"])
  const longSecret = (name: string) => r.secret(name, /^.{32,}$/s, "must be at least 32 characters")
  const config: AppConfigShape = {
    env: checkoutEnv,
    host,
    port,
    databaseUrl,
    databaseMultiplex: r.bool("CHECKOUT_DB_MULTIPLEX", true),
    dataDir: r.text("CHECKOUT_DATA_DIR", "./data"),
    publicUrl: publicUrl ?? `http://${displayHost}:${port}`,
    role: r.oneOf<Role>("CHECKOUT_ROLE", ["api", "workers", "all"], "all"),
    // Production opens no sign-up by default: the operator creates accounts (npm run cli -- account create <email>).
    signup: r.oneOf("CHECKOUT_SIGNUP", ["open", "closed"], production ? "closed" : "open"),
    webhookAllowLoopback: r.bool("CHECKOUT_WEBHOOK_ALLOW_LOOPBACK", !production),
    webhookPollIntervalMs: r.integer("CHECKOUT_WEBHOOK_POLL_MS", 1_000, 50, 3_600_000),
    watcherLeaseMs: r.integer("CHECKOUT_WATCHER_LEASE_MS", 6_000, 1_500, 600_000),
    jwtSecret: longSecret("CHECKOUT_JWT_SECRET"),
    encryptionKey: longSecret("CHECKOUT_ENCRYPTION_KEY"),
    metricsToken: r.secret("CHECKOUT_METRICS_TOKEN", /^.{16,}$/s, "must be at least 16 characters"),
    apiRateLimitPerMinute: r.integer("CHECKOUT_API_RATE_LIMIT", 100, 1, 1_000_000),
    solanaPrepareRateLimitPerMinute: r.integer("CHECKOUT_SOLANA_PREPARE_RATE_LIMIT", 10, 1, 1_000_000),
    refundRequestRateLimitPerMinute: r.integer("CHECKOUT_REFUND_RATE_LIMIT", 10, 1, 1_000_000),
    redisUrl,
    demo: r.bool("CHECKOUT_DEMO", !production),
    sweepIntervalMs: r.integer("CHECKOUT_SWEEP_INTERVAL_MS", 5_000, 100, 3_600_000),
    maxBodyBytes: r.integer("CHECKOUT_MAX_BODY_BYTES", 65_536, 1_024, 10_485_760),
    idempotencyTtlHours: 24,
    idempotencyLeaseMs: r.integer("CHECKOUT_IDEMPOTENCY_LEASE_MS", 30_000, 1_000, 3_600_000),
    requestTimeoutMs,
    databaseConnectTimeoutMs: r.integer("CHECKOUT_DB_CONNECT_TIMEOUT_MS", 5_000, 100, 600_000),
    embeddedSharedBuffers: r.matching("CHECKOUT_PGLITE_SHARED_BUFFERS", /^\d{1,6}(kB|MB|GB)$/, "must be a size such as 32MB") ?? "32MB",
    databaseStatementTimeoutMs: r.integer("CHECKOUT_DB_STATEMENT_TIMEOUT_MS", 30_000, 100, 3_600_000),
    price: {
      url: r.url("CHECKOUT_PRICE_URL", ["http:", "https:"]),
      jsonPath: r.text("CHECKOUT_PRICE_JSON_PATH", "bitcoin.usd"),
      // Set to empty: no staleness check.
      timestampPath: env.CHECKOUT_PRICE_TIMESTAMP_PATH === "" ? undefined : r.text("CHECKOUT_PRICE_TIMESTAMP_PATH", "bitcoin.last_updated_at"),
      timeoutMs: r.integer("CHECKOUT_PRICE_TIMEOUT_MS", 3_000, 100, 60_000),
      maxAgeSeconds: r.integer("CHECKOUT_PRICE_MAX_AGE_SECONDS", 300, 1, 86_400),
      fixedBtcUsd: r.custom(
        "CHECKOUT_BTC_USD_RATE",
        Config.schema(check((value) => /^\d+(\.\d{1,6})?$/.test(value) && Number(value) > 0), "CHECKOUT_BTC_USD_RATE").pipe(Config.withDefault("65000")),
        "must be a positive decimal number with at most 6 decimals",
        "65000"
      ),
      ...priceSourcesConfig(r)
    },
    probeThreshold: r.integer("CHECKOUT_PROBE_THRESHOLD", 5, 1, 1000),
    paymentWorkerThreads: r.integer("CHECKOUT_PAYMENT_WORKER_THREADS", 1, 0, 16),
    loginAttemptsPerMinute: r.integer("CHECKOUT_LOGIN_RATE_LIMIT", 10, 1, 100_000),
    loginAddressAttemptsPerMinute: r.integer("CHECKOUT_LOGIN_ADDRESS_RATE_LIMIT", 30, 1, 1_000_000),
    signupsPerMinute: r.integer("CHECKOUT_SIGNUP_RATE_LIMIT", 5, 1, 1_000_000),
    // Redis answers in well under a millisecond; the database store shares the connection pool with
    // every request (on PGlite, one connection), so a burst queues it behind other statements.
    rateLimitStoreTimeoutMs: r.integer("CHECKOUT_RATE_LIMIT_STORE_TIMEOUT_MS", redisUrl === undefined ? 1_000 : 100, 10, 60_000),
    passwords: {
      // Tests run many sign-ups; production and development pay OWASP's cost.
      logN: r.integer("CHECKOUT_PASSWORD_SCRYPT_LOG_N", checkoutEnv === "test" ? 12 : 17, production ? 17 : 10, 20),
      concurrency: r.integer("CHECKOUT_PASSWORD_HASH_CONCURRENCY", 2, 1, 64),
      // A quarter of the request budget: the hash itself and the database still fit in the rest.
      waitMs: r.integer("CHECKOUT_PASSWORD_HASH_WAIT_MS", Math.floor(requestTimeoutMs / 4), 10, 600_000)
    },
    rateLimitInstances: r.integer("CHECKOUT_RATE_LIMIT_INSTANCES", 1, 1, 10_000),
    dashboardRateLimitPerMinute: r.integer("CHECKOUT_DASHBOARD_RATE_LIMIT", 600, 1, 1_000_000),
    dashboardAddressRateLimitPerMinute: r.integer("CHECKOUT_DASHBOARD_ADDRESS_RATE_LIMIT", 1_200, 1, 1_000_000),
    trustedProxies: r.custom(
      "CHECKOUT_TRUSTED_PROXIES",
      Config.schema(check(isNetworkList), "CHECKOUT_TRUSTED_PROXIES").pipe(
        Config.withDefault(""),
        Config.map((value) => value.split(",").map((entry) => entry.trim()).filter((entry) => entry !== ""))
      ),
      "must be a comma-separated list of IP networks such as 10.0.0.0/8",
      []
    ),
    chains: chainWatchSettings(r),
    rails: railConfig(r, env),
    explorerUrls: explorerUrls(r),
    servicePrefix: r.text("CHECKOUT_SERVICE_PREFIX", "checkout")
  }
  if (production) {
    for (const name of ["CHECKOUT_JWT_SECRET", "CHECKOUT_ENCRYPTION_KEY"] as const) {
      if (!r.present(name)) r.problems.push(`${name} is required when CHECKOUT_ENV=production`)
    }
    if (config.demo) r.problems.push("CHECKOUT_DEMO=true is refused when CHECKOUT_ENV=production: the demo merchant's password and wallets are public")
    if (publicUrl === undefined) r.problems.push("CHECKOUT_PUBLIC_URL is required when CHECKOUT_ENV=production: it is the base of every paymentUrl")
    else if (plainHttpToOthers(publicUrl)) {
      r.problems.push(
        "CHECKOUT_PUBLIC_URL must use https when CHECKOUT_ENV=production (http only for loopback hosts): over plain HTTP anyone on the path can swap the payer page's address"
      )
    }
    if (databaseUrl === undefined && !r.present("CHECKOUT_DATA_DIR")) {
      r.problems.push(
        "DATABASE_URL is required when CHECKOUT_ENV=production (a PostgreSQL server); to run on the embedded database instead, set CHECKOUT_DATA_DIR explicitly"
      )
    }
  }
  return { config, problems: r.problems, declared: r.declared }
}

/** An http:// URL whose host is not loopback (localhost, 127.0.0.0/8, ::1). */
const plainHttpToOthers = (text: string): boolean => {
  const url = new URL(text)
  if (url.protocol !== "http:") return false
  const host = url.hostname.replace(/^\[|\]$/g, "")
  return !(host === "localhost" || host.endsWith(".localhost") || /^127\.\d+\.\d+\.\d+$/.test(host) || host === "::1")
}

/** Reads and validates the environment; throws a ConfigError listing every problem, each naming its variable. */
export const parseConfig = (env: Env): AppConfigShape => {
  const { config, problems } = read(env)
  if (problems.length > 0) throw new ConfigError(problems)
  return config
}

/** Every variable the service reads, with its rule (families such as `CHECKOUT_CONFIRMATIONS_<NETWORK>` once). */
export const declaredVariables = (): ReadonlyArray<Declared> => {
  const seen = new Map<string, Declared>()
  for (const entry of read({}).declared) if (!seen.has(entry.name)) seen.set(entry.name, entry)
  return [...seen.values()]
}

export class AppConfig extends Context.Service<AppConfig, AppConfigShape>()("Config/AppConfig") {
  static readonly fromEnv = (env: Env = process.env) => Layer.sync(AppConfig, () => parseConfig(env))
  static readonly layerWith = (overrides: Partial<AppConfigShape> = {}) => Layer.succeed(AppConfig, { ...parseConfig({ CHECKOUT_ENV: "test" }), ...overrides })
}
