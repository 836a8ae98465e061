import { HDKey } from "@scure/bip32"
import { Context, Effect, Exit, Layer, Redacted, Scope } from "effect"
import { HttpServer } from "effect/http"
import { Accounts } from "../../src/accounts/Accounts.ts"
import { Sessions } from "../../src/accounts/Sessions.ts"
import { makeApp } from "../../src/App.ts"
import { AppConfig, type AppConfigShape, parseConfig } from "../../src/config/AppConfig.ts"
import { DEMO_METHODS } from "../../src/demo/DemoMerchant.ts"
import { CheckoutSettingsRepo, type MethodInput } from "../../src/payments/CheckoutSettingsRepo.ts"
import type { PaymentTimingInput } from "../../src/domain/Timing.ts"

export const PUBLIC_URL = "https://checkout.example.test"

/** A fresh BIP84 account zpub, so that each test merchant has a bitcoin address pool of its own. */
export const freshZpub = () =>
  HDKey.fromMasterSeed(crypto.getRandomValues(new Uint8Array(32)), { private: 0x04b2430c, public: 0x04b24746 })
    .derive("m/84'/0'/0'").publicExtendedKey

export interface TestApp {
  readonly baseUrl: string
  readonly context: Context.Context<never>
  readonly run: <A, E>(effect: Effect.Effect<A, E, any>) => Promise<A>
  readonly close: () => Promise<void>
  readonly createMerchant: (options?: MerchantOptions) => Promise<TestMerchant>
}

export interface MerchantOptions {
  readonly methods?: ReadonlyArray<MethodInput>
  readonly timing?: PaymentTimingInput
  readonly issuedBy?: string | null
  readonly withSettings?: boolean
}

export interface TestMerchant {
  readonly merchantId: string
  readonly email: string
  readonly apiKey: string
  /** A dashboard session (bearer JWT) of the same account. */
  readonly sessionToken: string
  /** That session's CSRF token, for writes authenticated by the session cookie. */
  readonly csrfToken: string
  readonly dashboard: (path: string, init?: { method?: string; body?: unknown; headers?: Record<string, string> }) => Promise<{ status: number; body: any; headers: Headers }>
  readonly api: (path: string, init?: { method?: string; body?: unknown; headers?: Record<string, string> }) => Promise<{ status: number; body: any; headers: Headers }>
}

/** The whole service on a loopback port over the embedded PGlite, or DATABASE_URL when set; `extraEnv` adds settings (token contracts, RPC URLs). */
export const startTestApp = async (overrides: Partial<AppConfigShape> = {}, extraEnv: Readonly<Record<string, string>> = {}): Promise<TestApp> => {
  const env = {
    CHECKOUT_ENV: "test",
    CHECKOUT_DATA_DIR: "memory://",
    CHECKOUT_DEMO: "false",
    CHECKOUT_PUBLIC_URL: PUBLIC_URL,
    PORT: "0",
    DATABASE_URL: process.env.DATABASE_URL,
    ...extraEnv
  }
  // Suites make hundreds of requests per merchant; the rate-limit suite sets the real limit itself.
  // No background workers: suites drive the sweeper and the dispatcher themselves, and with a
  // shared PostgreSQL one suite's workers would otherwise act on another suite's data.
  const config = {
    ...parseConfig(env),
    apiRateLimitPerMinute: 1_000_000,
    signupsPerMinute: 1_000_000,
    loginAddressAttemptsPerMinute: 1_000_000,
    role: "api" as const,
    // A production configuration always carries its secrets (parseConfig requires them).
    ...(overrides.env === "production" ? { jwtSecret: Redacted.make("test-jwt-secret-".repeat(3)), encryptionKey: Redacted.make("test-encryption-key-".repeat(3)) } : {}),
    ...overrides
  }
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(makeApp(Layer.succeed(AppConfig, config), env), scope)) as Context.Context<never>
  const address = Context.get(context as Context.Context<HttpServer.HttpServer>, HttpServer.HttpServer).address
  if (!("port" in address)) throw new Error("expected a TCP address")
  const baseUrl = `http://127.0.0.1:${address.port}`
  const run = <A, E>(effect: Effect.Effect<A, E, any>) => Effect.runPromise(Effect.provide(effect, context) as Effect.Effect<A, E>)

  const request = async (path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) => {
    const hasBody = init.body !== undefined
    const response = await fetch(`${baseUrl}${path}`, {
      method: init.method ?? (hasBody ? "POST" : "GET"),
      headers: { ...(hasBody ? { "content-type": "application/json" } : {}), ...init.headers },
      body: hasBody ? (typeof init.body === "string" ? init.body : JSON.stringify(init.body)) : undefined
    })
    const text = await response.text()
    let body: unknown = text
    try {
      body = JSON.parse(text)
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, body: body as any, headers: response.headers }
  }

  const createMerchant = async (options: MerchantOptions = {}): Promise<TestMerchant> => {
    const email = `${crypto.randomUUID()}@merchant.test`
    const { merchantId, apiKey, sessionToken, csrfToken } = await run(Effect.gen(function*() {
      const accounts = yield* Accounts
      const settings = yield* CheckoutSettingsRepo
      const merchantId = yield* accounts.createMerchant({ email })
      if (options.withSettings !== false) {
        yield* settings.save(merchantId, {
          issuedBy: options.issuedBy === undefined ? "Test Store" : options.issuedBy,
          timing: options.timing ?? { mode: "immediate", expiresAfterMinutes: 60 },
          methods: options.methods ?? DEMO_METHODS.map((method) => (method.network === "bitcoin" ? { ...method, xpub: freshZpub() } : method))
        })
      }
      const key = yield* Effect.orDie(accounts.createApiKey(merchantId, "test"))
      const sessions = yield* Sessions
      const session = yield* sessions.issue(merchantId)
      return { merchantId, apiKey: key.rawKey, sessionToken: session.token, csrfToken: sessions.csrfToken(session.sessionId) }
    }))
    return {
      merchantId,
      email,
      apiKey,
      sessionToken,
      csrfToken,
      api: (path, init = {}) => request(path, { ...init, headers: { "x-api-key": apiKey, ...init.headers } }),
      dashboard: (path, init = {}) => request(path, { ...init, headers: { authorization: `Bearer ${sessionToken}`, ...init.headers } })
    }
  }

  return {
    baseUrl,
    context,
    run,
    createMerchant,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

export const publicRequest = async (baseUrl: string, path: string, init: RequestInit = {}) => {
  const response = await fetch(`${baseUrl}${path}`, init)
  const text = await response.text()
  let body: any = text
  try {
    body = JSON.parse(text)
  } catch {
    // keep text
  }
  return { status: response.status, body, headers: response.headers }
}
