import { Config, Context, Layer, type Redacted, Result } from "effect"
import { IpNetwork } from "effect/net"
import { chainWatchSettings, explorerUrls, railConfig, type ChainWatchSettings, type RailConfig, type WatchedNetwork } from "./ChainConfig.ts"
import { check, ConfigError, type Declared, type Env, makeReader, type Reader } from "./ConfigReader.ts"
import { priceConfig, type PriceSourceSpec, type StablecoinSourceSpec } from "./PriceConfig.ts"

export type { ChainWatchSettings, RailConfig, WatchedNetwork } from "./ChainConfig.ts"
export { ConfigError, type Declared } from "./ConfigReader.ts"
export { PRICE_PRESETS, STABLECOIN_PRICE_PRESETS } from "./PriceConfig.ts"
export type { CustomPriceSource, PricePreset, PriceSourceSpec, StablecoinAsset, StablecoinSourceSpec } from "./PriceConfig.ts"

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

const isNetworkList = (value: string) =>
  value.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "").every((entry) =>
    Result.isSuccess(IpNetwork.fromString(entry.includes("/") ? entry : `${entry}/${entry.includes(":") ? 128 : 32}`))
  )

/** What production refuses: missing secrets, the public demo, no public URL, an implicit embedded database. */
const productionProblems = (r: Reader, config: AppConfigShape, publicUrl: string | undefined, databaseUrl: string | undefined) => {
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

/**
 * Why a public URL cannot be the base of `<base>/pay/<id>`: spaces around it, user information
 * (a link that carries credentials), a query or a fragment (the path appended after `?a=1#f` lands
 * in the fragment). Undefined when it can.
 */
export const publicUrlProblem = (text: string): string | undefined => {
  const url = new URL(text.trim())
  const found = [
    text !== text.trim() ? "surrounding spaces" : undefined,
    url.username !== "" || url.password !== "" ? "user information" : undefined,
    text.includes("?") ? "a query" : undefined,
    text.includes("#") ? "a fragment" : undefined
  ].filter((entry) => entry !== undefined)
  return found.length === 0
    ? undefined
    : `CHECKOUT_PUBLIC_URL must be a plain base URL (scheme, host, optional port and path) that paymentUrl appends /pay/<id> to: it has ${found.join(", ")} (got "${text}")`
}

/** The public URL when CHECKOUT_PUBLIC_URL is unset: the listen address. */
const defaultPublicUrl = (host: string, port: number) => `http://${host.includes(":") ? `[${host}]` : host === "0.0.0.0" ? "127.0.0.1" : host}:${port}`

/**
 * The configuration once the server listens: with PORT=0 the system chose the port, and the
 * default public URL (every paymentUrl, the start banner's links) carries that one, not `:0`.
 */
export const withBoundPort = (config: AppConfigShape, boundPort: number): AppConfigShape =>
  config.port !== 0 ? config : {
    ...config,
    port: boundPort,
    publicUrl: config.publicUrl === defaultPublicUrl(config.host, 0) ? defaultPublicUrl(config.host, boundPort) : config.publicUrl
  }

const read = (env: Env): { readonly config: AppConfigShape; readonly problems: ReadonlyArray<string>; readonly declared: ReadonlyArray<Declared> } => {
  const r = makeReader(env)
  const checkoutEnv = r.oneOf<CheckoutEnv>("CHECKOUT_ENV", ["development", "production", "test"], "development")
  const production = checkoutEnv === "production"
  const host = r.text("HOST", "127.0.0.1")
  const port = r.integer("PORT", 3000, 0, 65535)
  const publicUrl = r.url("CHECKOUT_PUBLIC_URL", ["http:", "https:"])
  const publicUrlRefusal = publicUrl === undefined ? undefined : publicUrlProblem(env.CHECKOUT_PUBLIC_URL ?? "")
  if (publicUrlRefusal !== undefined) r.problems.push(publicUrlRefusal)
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
    publicUrl: publicUrl ?? defaultPublicUrl(host, port),
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
    price: priceConfig(r, env),
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
  if (production) productionProblems(r, config, publicUrl, databaseUrl)
  return { config, problems: r.problems, declared: r.declared }
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

/** An http:// URL whose host is not loopback (localhost, 127.0.0.0/8, ::1). */
const plainHttpToOthers = (text: string): boolean => {
  const url = new URL(text)
  if (url.protocol !== "http:") return false
  const host = url.hostname.replace(/^\[|\]$/g, "")
  return !(host === "localhost" || host.endsWith(".localhost") || /^127\.\d+\.\d+\.\d+$/.test(host) || host === "::1")
}
