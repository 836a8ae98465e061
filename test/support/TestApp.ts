import { Context, Effect, Exit, Layer, Option, Scope } from "effect"
import { HttpServer } from "effect/http"
import type { Accounts } from "../../src/accounts/Accounts.ts"
import type { Sessions } from "../../src/accounts/Sessions.ts"
import { makeApp } from "../../src/App.ts"
import type { AppConfigShape } from "../../src/config/AppConfig.ts"
import type { CheckoutSettingsRepo } from "../../src/payments/CheckoutSettingsRepo.ts"
import type { JsonBody } from "./Json.ts"
import { type MerchantOptions, newMerchant, testConfigLayer } from "./TestLayers.ts"
import type { MerchantId } from "../../src/domain/Ids.ts"

export type { JsonBody }

export { freshZpub, type MerchantOptions, PUBLIC_URL } from "./TestLayers.ts"

/** Every service the application provides (repositories, use cases, the HTTP server, the SQL client). */
export type AppServices = Layer.Success<ReturnType<typeof makeApp>>

export interface RequestInit {
  readonly method?: string
  readonly body?: unknown
  readonly headers?: Record<string, string>
}

export interface Answer {
  readonly status: number
  readonly body: JsonBody
  readonly headers: Headers
}

interface MerchantCredentials {
  readonly merchantId: MerchantId
  readonly email: string
  readonly apiKey: string
  /** A dashboard session (bearer JWT) of the same account. */
  readonly sessionToken: string
  /** That session's CSRF token, for writes authenticated by the session cookie. */
  readonly csrfToken: string
}

/** A merchant whose requests are promises (suites written with plain vitest). */
export interface TestMerchant extends MerchantCredentials {
  readonly dashboard: (path: string, init?: RequestInit) => Promise<Answer>
  readonly api: (path: string, init?: RequestInit) => Promise<Answer>
}

/** A merchant whose requests are effects (suites written with `@effect/vitest`). */
export interface Merchant extends MerchantCredentials {
  readonly dashboard: (path: string, init?: RequestInit) => Effect.Effect<Answer>
  readonly api: (path: string, init?: RequestInit) => Effect.Effect<Answer>
}

/** Sends one request to the listening server and reads the answer (JSON when it parses, else the text). */
const send = async (baseUrl: string, path: string, init: RequestInit = {}): Promise<Answer> => {
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
  return { status: response.status, body, headers: response.headers }
}

/** The running server as tests reach it: its loopback URL, merchants, and requests that need no credentials. */
export class TestServer extends Context.Service<TestServer, {
  readonly baseUrl: string
  readonly createMerchant: (options?: MerchantOptions) => Effect.Effect<Merchant>
  readonly request: (path: string, init?: RequestInit) => Effect.Effect<Answer>
}>()("test/TestServer") {
  static readonly layer = Layer.effect(
    TestServer,
    Effect.gen(function*() {
      // makeApp's type does not list the server (a workers-only process has none), so look it up.
      const server = yield* Effect.serviceOption(HttpServer.HttpServer)
      if (Option.isNone(server)) return yield* Effect.die(new Error("the application has no HTTP server (role workers?)"))
      const address = server.value.address
      if (!("port" in address)) return yield* Effect.die(new Error("expected a TCP address"))
      const baseUrl = `http://127.0.0.1:${address.port}`
      const context = yield* Effect.context<Accounts | CheckoutSettingsRepo | Sessions>()
      const request = (path: string, init?: RequestInit) => Effect.promise(() => send(baseUrl, path, init))
      return {
        baseUrl,
        request,
        createMerchant: (options: MerchantOptions = {}) =>
          Effect.map(Effect.provide(newMerchant(options), context), (credentials): Merchant => ({
            ...credentials,
            api: (path, init = {}) => request(path, { ...init, headers: { "x-api-key": credentials.apiKey, ...init.headers } }),
            dashboard: (path, init = {}) => request(path, { ...init, headers: { authorization: `Bearer ${credentials.sessionToken}`, ...init.headers } })
          }))
      }
    })
  )
}

/**
 * The whole service on a loopback port over the embedded PGlite, or DATABASE_URL when set, and
 * `TestServer` to reach it; `overrides` replace configuration values, `extraEnv` adds settings
 * (token contracts, RPC URLs). For `it.layer(testApp(...), { excludeTestServices: true })`: the
 * server keeps the real clock, as the HTTP suites expect.
 */
export const testApp = (overrides: Partial<AppConfigShape> = {}, extraEnv: Readonly<Record<string, string>> = {}) =>
  TestServer.layer.pipe(Layer.provideMerge(makeApp(testConfigLayer(overrides, extraEnv))))

/**
 * A second application inside a test, closed with the test's scope. Built with a memo map of its
 * own: the suite's layers would otherwise be shared with it (one server, one database).
 */
export const anotherApp = (overrides: Partial<AppConfigShape> = {}, extraEnv: Readonly<Record<string, string>> = {}) =>
  Effect.gen(function*() {
    const memoMap = yield* Layer.makeMemoMap
    return yield* Layer.buildWithMemoMap(testApp(overrides, extraEnv), memoMap, yield* Effect.scope)
  })

/** One merchant shared by the tests of a suite, created when the suite's layer is built. */
export class SuiteMerchant extends Context.Service<SuiteMerchant, Merchant>()("test/SuiteMerchant") {
  static readonly layer = (options: MerchantOptions = {}) => Layer.effect(SuiteMerchant, Effect.flatMap(TestServer, (server) => server.createMerchant(options)))
}

/** `it.layer` options for a suite over `testApp`: the real clock (HTTP suites), a start-up budget. */
export const suiteOptions = { timeout: "120 seconds", excludeTestServices: true } as const

export interface TestApp {
  readonly baseUrl: string
  readonly context: Context.Context<AppServices>
  readonly run: <A, E>(effect: Effect.Effect<A, E, AppServices>) => Promise<A>
  readonly close: () => Promise<void>
  readonly createMerchant: (options?: MerchantOptions) => Promise<TestMerchant>
}

/** `testApp` started outside Effect, for suites written with plain vitest hooks. */
export const startTestApp = async (overrides: Partial<AppConfigShape> = {}, extraEnv: Readonly<Record<string, string>> = {}): Promise<TestApp> => {
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(testApp(overrides, extraEnv), scope))
  const server = Context.get(context, TestServer)
  const run = <A, E>(effect: Effect.Effect<A, E, AppServices>) => Effect.runPromise(Effect.provide(effect, context))
  return {
    baseUrl: server.baseUrl,
    context,
    run,
    createMerchant: async (options = {}) => {
      const merchant = await Effect.runPromise(server.createMerchant(options))
      return {
        ...merchant,
        api: (path, init) => Effect.runPromise(merchant.api(path, init)),
        dashboard: (path, init) => Effect.runPromise(merchant.dashboard(path, init))
      }
    },
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

export const publicRequest = async (baseUrl: string, path: string, init: globalThis.RequestInit = {}) => {
  const response = await fetch(`${baseUrl}${path}`, init)
  const text = await response.text()
  let body: JsonBody = text
  try {
    body = JSON.parse(text)
  } catch {
    // keep text
  }
  return { status: response.status, body, headers: response.headers }
}
