import { Context, Layer, Redacted, Result } from "effect"
import { IpNetwork } from "effect/net"

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
  readonly apiRateLimitPerMinute: number
  readonly solanaPrepareRateLimitPerMinute: number
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
}

export type WatchedNetwork = "bitcoin" | "ethereum" | "arbitrum" | "base" | "solana"

/** Where each network's watcher reads the chain; a network without an endpoint has no watcher. */
export interface ChainWatchSettings {
  /** JSON-RPC URL (EVM, solana) or Esplora base URL (bitcoin) of each watched network. */
  readonly endpoints: Partial<Record<WatchedNetwork, string>>
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

export class ConfigError extends Error {
  override readonly name = "ConfigError"
}

type Env = Readonly<Record<string, string | undefined>>

const oneOf = <T extends string>(env: Env, name: string, allowed: ReadonlyArray<T>, fallback: T): T => {
  const value = env[name]
  if (value === undefined || value === "") return fallback
  if ((allowed as ReadonlyArray<string>).includes(value)) return value as T
  throw new ConfigError(`${name} must be one of ${allowed.join(", ")} (got "${value}")`)
}

const integer = (env: Env, name: string, fallback: number, min: number, max: number): number => {
  const value = env[name]
  if (value === undefined || value === "") return fallback
  const parsed = Number(value)
  if (!/^\d+$/.test(value) || parsed < min || parsed > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got "${value}")`)
  }
  return parsed
}

const bool = (env: Env, name: string, fallback: boolean): boolean => {
  const value = env[name]
  if (value === undefined || value === "") return fallback
  if (value === "true" || value === "1") return true
  if (value === "false" || value === "0") return false
  throw new ConfigError(`${name} must be true or false (got "${value}")`)
}

const url = (env: Env, name: string, protocols: ReadonlyArray<string>): string | undefined => {
  const value = env[name]
  if (value === undefined || value === "") return undefined
  try {
    const parsed = new URL(value)
    if (!protocols.includes(parsed.protocol)) throw new Error("protocol")
    return value.replace(/\/+$/, "")
  } catch {
    throw new ConfigError(`${name} must be a URL starting with ${protocols.join(" or ")} (got "${value}")`)
  }
}

const memorySize = (env: Env, name: string, fallback: string): string => {
  const value = env[name]
  if (value === undefined || value === "") return fallback
  if (!/^\d{1,6}(kB|MB|GB)$/.test(value)) throw new ConfigError(`${name} must be a size such as 32MB (got "${value}")`)
  return value
}

const cidrList = (env: Env, name: string): ReadonlyArray<string> => {
  const value = env[name]
  if (value === undefined || value.trim() === "") return []
  const entries = value.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "")
  for (const entry of entries) {
    if (Result.isFailure(IpNetwork.fromString(entry.includes("/") ? entry : `${entry}/${entry.includes(":") ? 128 : 32}`))) {
      throw new ConfigError(`${name} must be a comma-separated list of IP networks such as 10.0.0.0/8 (got "${entry}")`)
    }
  }
  return entries
}

const decimal = (env: Env, name: string, fallback: string): string => {
  const value = env[name]
  if (value === undefined || value === "") return fallback
  if (!/^\d+(\.\d{1,6})?$/.test(value) || Number(value) <= 0) {
    throw new ConfigError(`${name} must be a positive decimal number with at most 6 decimals (got "${value}")`)
  }
  return value
}

const secret = (env: Env, name: string, production: boolean): Redacted.Redacted<string> | undefined => {
  const value = env[name]
  if (value !== undefined && value !== "") {
    if (value.length < 32) throw new ConfigError(`${name} must be at least 32 characters`)
    return Redacted.make(value)
  }
  if (production) throw new ConfigError(`${name} is required when CHECKOUT_ENV=production`)
  return undefined
}

const WATCHED_NETWORKS: ReadonlyArray<WatchedNetwork> = ["bitcoin", "ethereum", "arbitrum", "base", "solana"]
const DEFAULT_POLL_MS: Record<WatchedNetwork, number> = { bitcoin: 15_000, ethereum: 4_000, arbitrum: 1_000, base: 2_000, solana: 1_000 }

const relayerKey = (env: Env): Redacted.Redacted<string> | undefined => {
  const value = env.CHECKOUT_EVM_RELAYER_KEY
  if (value === undefined || value === "") return undefined
  if (!/^0x[0-9a-fA-F]{64}$/.test(value)) throw new ConfigError("CHECKOUT_EVM_RELAYER_KEY must be a 32-byte hex private key (0x followed by 64 hex digits)")
  return Redacted.make(value)
}

const chainWatchSettings = (env: Env): ChainWatchSettings => {
  const endpoints: Partial<Record<WatchedNetwork, string>> = {}
  for (const network of WATCHED_NETWORKS) {
    const name = network === "bitcoin" ? "CHECKOUT_ESPLORA_URL" : `CHECKOUT_RPC_URL_${network.toUpperCase()}`
    const endpoint = url(env, name, ["http:", "https:"])
    if (endpoint !== undefined) endpoints[network] = endpoint
  }
  const pollIntervalMs = Object.fromEntries(WATCHED_NETWORKS.map((network) => [
    network,
    integer(env, `CHECKOUT_POLL_INTERVAL_MS_${network.toUpperCase()}`, DEFAULT_POLL_MS[network], 50, 3_600_000)
  ])) as Record<WatchedNetwork, number>
  return {
    endpoints,
    pollIntervalMs,
    evmMaxLogRange: integer(env, "CHECKOUT_EVM_MAX_LOG_RANGE", 2_000, 1, 1_000_000),
    rpcTimeoutMs: integer(env, "CHECKOUT_RPC_TIMEOUT_MS", 10_000, 100, 300_000),
    watchRetentionDays: integer(env, "CHECKOUT_WATCH_RETENTION_DAYS", 30, 0, 3_650),
    evmRelayerKey: relayerKey(env),
    forwarderSweepIntervalMs: integer(env, "CHECKOUT_FORWARDER_SWEEP_INTERVAL_MS", 15_000, 100, 3_600_000),
    bitcoinMempoolAddressLimit: integer(env, "CHECKOUT_BITCOIN_MEMPOOL_ADDRESS_LIMIT", 50, 0, 1_000_000)
  }
}

/** Reads and validates the environment; throws ConfigError with a message naming the variable. */
export const parseConfig = (env: Env): AppConfigShape => {
  const checkoutEnv = oneOf<CheckoutEnv>(env, "CHECKOUT_ENV", ["development", "production", "test"], "development")
  const production = checkoutEnv === "production"
  const host = env.HOST !== undefined && env.HOST !== "" ? env.HOST : "127.0.0.1"
  const port = integer(env, "PORT", 3000, 0, 65535)
  const displayHost = host.includes(":") ? `[${host}]` : host === "0.0.0.0" ? "127.0.0.1" : host
  return {
    env: checkoutEnv,
    host,
    port,
    databaseUrl: url(env, "DATABASE_URL", ["postgres:", "postgresql:"]),
    databaseMultiplex: bool(env, "CHECKOUT_DB_MULTIPLEX", true),
    dataDir: env.CHECKOUT_DATA_DIR !== undefined && env.CHECKOUT_DATA_DIR !== "" ? env.CHECKOUT_DATA_DIR : "./data",
    publicUrl: url(env, "CHECKOUT_PUBLIC_URL", ["http:", "https:"]) ?? `http://${displayHost}:${port}`,
    role: oneOf<Role>(env, "CHECKOUT_ROLE", ["api", "workers", "all"], "all"),
    signup: oneOf(env, "CHECKOUT_SIGNUP", ["open", "closed"], "open"),
    webhookAllowLoopback: bool(env, "CHECKOUT_WEBHOOK_ALLOW_LOOPBACK", !production),
    webhookPollIntervalMs: integer(env, "CHECKOUT_WEBHOOK_POLL_MS", 1_000, 50, 3_600_000),
    watcherLeaseMs: integer(env, "CHECKOUT_WATCHER_LEASE_MS", 6_000, 1_500, 600_000),
    jwtSecret: secret(env, "CHECKOUT_JWT_SECRET", production),
    encryptionKey: secret(env, "CHECKOUT_ENCRYPTION_KEY", production),
    apiRateLimitPerMinute: integer(env, "CHECKOUT_API_RATE_LIMIT", 100, 1, 1_000_000),
    solanaPrepareRateLimitPerMinute: integer(env, "CHECKOUT_SOLANA_PREPARE_RATE_LIMIT", 10, 1, 1_000_000),
    redisUrl: url(env, "REDIS_URL", ["redis:", "rediss:"]),
    demo: bool(env, "CHECKOUT_DEMO", !production),
    sweepIntervalMs: integer(env, "CHECKOUT_SWEEP_INTERVAL_MS", 5_000, 100, 3_600_000),
    maxBodyBytes: integer(env, "CHECKOUT_MAX_BODY_BYTES", 65_536, 1_024, 10_485_760),
    idempotencyTtlHours: 24,
    idempotencyLeaseMs: integer(env, "CHECKOUT_IDEMPOTENCY_LEASE_MS", 30_000, 1_000, 3_600_000),
    requestTimeoutMs: integer(env, "CHECKOUT_REQUEST_TIMEOUT_MS", 10_000, 100, 600_000),
    databaseConnectTimeoutMs: integer(env, "CHECKOUT_DB_CONNECT_TIMEOUT_MS", 5_000, 100, 600_000),
    embeddedSharedBuffers: memorySize(env, "CHECKOUT_PGLITE_SHARED_BUFFERS", "32MB"),
    databaseStatementTimeoutMs: integer(env, "CHECKOUT_DB_STATEMENT_TIMEOUT_MS", 30_000, 100, 3_600_000),
    price: {
      url: url(env, "CHECKOUT_PRICE_URL", ["http:", "https:"]),
      jsonPath: env.CHECKOUT_PRICE_JSON_PATH || "bitcoin.usd",
      timestampPath: env.CHECKOUT_PRICE_TIMESTAMP_PATH === "" ? undefined : env.CHECKOUT_PRICE_TIMESTAMP_PATH ?? "bitcoin.last_updated_at",
      timeoutMs: integer(env, "CHECKOUT_PRICE_TIMEOUT_MS", 3_000, 100, 60_000),
      maxAgeSeconds: integer(env, "CHECKOUT_PRICE_MAX_AGE_SECONDS", 300, 1, 86_400),
      fixedBtcUsd: decimal(env, "CHECKOUT_BTC_USD_RATE", "65000")
    },
    probeThreshold: integer(env, "CHECKOUT_PROBE_THRESHOLD", 5, 1, 1000),
    paymentWorkerThreads: integer(env, "CHECKOUT_PAYMENT_WORKER_THREADS", 1, 0, 16),
    loginAttemptsPerMinute: integer(env, "CHECKOUT_LOGIN_RATE_LIMIT", 10, 1, 100_000),
    loginAddressAttemptsPerMinute: integer(env, "CHECKOUT_LOGIN_ADDRESS_RATE_LIMIT", 30, 1, 1_000_000),
    signupsPerMinute: integer(env, "CHECKOUT_SIGNUP_RATE_LIMIT", 5, 1, 1_000_000),
    // Redis answers in well under a millisecond; the database store shares the connection pool with
    // every request (on PGlite, one connection), so a burst queues it behind other statements.
    rateLimitStoreTimeoutMs: integer(env, "CHECKOUT_RATE_LIMIT_STORE_TIMEOUT_MS", url(env, "REDIS_URL", ["redis:", "rediss:"]) === undefined ? 1_000 : 100, 10, 60_000),
    passwords: {
      // Tests run many sign-ups; production and development pay OWASP's cost.
      logN: integer(env, "CHECKOUT_PASSWORD_SCRYPT_LOG_N", checkoutEnv === "test" ? 12 : 17, production ? 17 : 10, 20),
      concurrency: integer(env, "CHECKOUT_PASSWORD_HASH_CONCURRENCY", 2, 1, 64),
      // A quarter of the request budget: the hash itself and the database still fit in the rest.
      waitMs: integer(env, "CHECKOUT_PASSWORD_HASH_WAIT_MS", Math.floor(integer(env, "CHECKOUT_REQUEST_TIMEOUT_MS", 10_000, 100, 600_000) / 4), 10, 600_000)
    },
    rateLimitInstances: integer(env, "CHECKOUT_RATE_LIMIT_INSTANCES", 1, 1, 10_000),
    dashboardRateLimitPerMinute: integer(env, "CHECKOUT_DASHBOARD_RATE_LIMIT", 600, 1, 1_000_000),
    dashboardAddressRateLimitPerMinute: integer(env, "CHECKOUT_DASHBOARD_ADDRESS_RATE_LIMIT", 1_200, 1, 1_000_000),
    trustedProxies: cidrList(env, "CHECKOUT_TRUSTED_PROXIES"),
    chains: chainWatchSettings(env),
    servicePrefix: env.CHECKOUT_SERVICE_PREFIX !== undefined && env.CHECKOUT_SERVICE_PREFIX !== "" ? env.CHECKOUT_SERVICE_PREFIX : "checkout"
  }
}

export class AppConfig extends Context.Service<AppConfig, AppConfigShape>()("Config/AppConfig") {
  static readonly fromEnv = (env: Env = process.env) => Layer.sync(AppConfig, () => parseConfig(env))
  static readonly layerWith = (overrides: Partial<AppConfigShape> = {}) => Layer.succeed(AppConfig, { ...parseConfig({ CHECKOUT_ENV: "test" }), ...overrides })
}
