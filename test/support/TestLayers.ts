import { HDKey } from "@scure/bip32"
import { cpSync, mkdtempSync, rmSync } from "node:fs"
import { Context, Effect, Layer, Redacted } from "effect"
import { Accounts } from "../../src/accounts/Accounts.ts"
import { Sessions } from "../../src/accounts/Sessions.ts"
import { ServicesLive } from "../../src/App.ts"
import { AppConfig, type AppConfigShape, parseConfig } from "../../src/config/AppConfig.ts"
import { DatabaseLive } from "../../src/db/Database.ts"
import { DEMO_METHODS } from "../../src/demo/DemoMerchant.ts"
import type { PaymentTimingInput } from "../../src/domain/Timing.ts"
import { type InvoiceDraft, Invoices } from "../../src/invoices/Invoices.ts"
import { CheckoutSettingsRepo, type MethodInput } from "../../src/payments/CheckoutSettingsRepo.ts"
import { privateDatabase } from "./PrivateDatabase.ts"
import type { MerchantId } from "../../src/domain/Ids.ts"

// Layers for suites that need part of the application (a repository, a service, every domain
// service) rather than the whole of it behind a listening server (TestApp.ts).

export const PUBLIC_URL = "https://checkout.example.test"

/** A fresh BIP84 account zpub, so that each test merchant has a bitcoin address pool of its own. */
export const freshZpub = () =>
  HDKey.fromMasterSeed(crypto.getRandomValues(new Uint8Array(32)), { private: 0x04b2430c, public: 0x04b24746 })
    .derive("m/84'/0'/0'").publicExtendedKey

/**
 * The configuration of the test suites: the embedded PGlite, or DATABASE_URL when set; `overrides`
 * replace values, `extraEnv` adds settings (token contracts, RPC URLs, another DATABASE_URL).
 */
export const testConfig = (overrides: Partial<AppConfigShape> = {}, extraEnv: Readonly<Record<string, string>> = {}): AppConfigShape => {
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
  return {
    ...parseConfig(env),
    apiRateLimitPerMinute: 1_000_000,
    signupsPerMinute: 1_000_000,
    loginAddressAttemptsPerMinute: 1_000_000,
    role: "api" as const,
    // PGlite starting in a loaded CI run (two busy cores, two suites each starting apps) can take
    // far longer than production's 5 s to accept a connection: 30 s was seen to run out. Sized to
    // stay within the 120 s hook time-out; the suites that test connect time-outs set their own.
    databaseConnectTimeoutMs: 100_000,
    // A production configuration always carries its secrets (parseConfig requires them).
    ...(overrides.env === "production" ? { jwtSecret: Redacted.make("test-jwt-secret-".repeat(3)), encryptionKey: Redacted.make("test-encryption-key-".repeat(3)) } : {}),
    ...overrides
  }
}

/** Set by globalSetup: a PGlite data directory already initialised and migrated, for the run. */
export const PGLITE_TEMPLATE_VARIABLE = "TEST_PGLITE_TEMPLATE"

/**
 * `testConfig` as a layer. An embedded in-memory database starts instead from a private copy of
 * the migrated template that globalSetup made (removed with the layer): an app starts on a copy
 * for about 0.3 s of CPU, where PGlite's initdb and the migrations took 1.8 s for every app a
 * suite starts. The schema is the same; the copy is empty, as a new in-memory database is. Left as configured
 * with DATABASE_URL, another data directory, the demo (whose key file follows a real directory),
 * or outside vitest (scripts), where no template exists.
 */
export const testConfigLayer = (overrides: Partial<AppConfigShape> = {}, extraEnv: Readonly<Record<string, string>> = {}) => {
  const config = testConfig(overrides, extraEnv)
  const template = process.env[PGLITE_TEMPLATE_VARIABLE]
  if (template === undefined || config.databaseUrl !== undefined || config.dataDir !== "memory://" || config.demo) return Layer.succeed(AppConfig, config)
  return Layer.effect(
    AppConfig,
    Effect.map(
      Effect.acquireRelease(
        Effect.sync(() => {
          // Named after the template, so that globalSetup's teardown removes a copy a killed worker left.
          const copy = mkdtempSync(`${template}-`)
          cpSync(template, copy, { recursive: true })
          return copy
        }),
        (copy) => Effect.sync(() => rmSync(copy, { recursive: true, force: true }))
      ),
      (dataDir): AppConfigShape => ({ ...config, dataDir })
    )
  )
}

/**
 * The application's own database layer (`DatabaseLive`: the same client settings, migrated) with
 * the suites' configuration: `SqlClient` and `AppConfig`, for suites of one repository or service,
 * which add that service's real layer on top.
 */
export const testDatabase = (overrides: Partial<AppConfigShape> = {}, extraEnv: Readonly<Record<string, string>> = {}) =>
  DatabaseLive.pipe(Layer.provideMerge(testConfigLayer(overrides, extraEnv)))

/**
 * Every domain service over the test database (`ServicesLive`: repositories, use cases, evidence,
 * watchers, dispatcher), without the HTTP server and without background workers.
 */
export const testServices = (overrides: Partial<AppConfigShape> = {}, extraEnv: Readonly<Record<string, string>> = {}) =>
  ServicesLive.pipe(Layer.provideMerge(testConfigLayer(overrides, extraEnv)))

/**
 * `layer` (given the database URL to use, undefined for the embedded PGlite) over a database of
 * its own on the DATABASE_URL server, dropped when the suite's layer is closed.
 */
export const inPrivateDatabase = <A, E, R>(layer: (databaseUrl: string | undefined) => Layer.Layer<A, E, R>) =>
  Layer.unwrap(Effect.map(
    Effect.acquireRelease(Effect.promise(() => privateDatabase()), (database) => Effect.promise(() => database.drop())),
    (database) => layer(database.url)
  ))

export interface MerchantOptions {
  readonly methods?: ReadonlyArray<MethodInput>
  readonly timing?: PaymentTimingInput
  readonly issuedBy?: string | null
  readonly withSettings?: boolean
}

/** A new merchant account with checkout settings (the demo methods by default), an API key and a dashboard session. */
export const newMerchant = (options: MerchantOptions = {}) =>
  Effect.gen(function*() {
    const email = `${crypto.randomUUID()}@merchant.test`
    const accounts = yield* Accounts
    const settings = yield* CheckoutSettingsRepo
    const merchantId = yield* accounts.createMerchant({ email })
    if (options.withSettings !== false) {
      yield* settings.save(merchantId, true, {
        issuedBy: options.issuedBy === undefined ? "Test Store" : options.issuedBy,
        timing: options.timing ?? { mode: "immediate", expiresAfterMinutes: 60 },
        methods: options.methods ?? DEMO_METHODS.map((method) => (method.network === "bitcoin" ? { ...method, xpub: freshZpub() } : method))
      })
    }
    const key = yield* Effect.orDie(accounts.createApiKey(merchantId, "test"))
    const sessions = yield* Sessions
    const session = yield* sessions.issue(merchantId)
    return { merchantId, email, apiKey: key.rawKey, sessionToken: session.token, csrfToken: sessions.csrfToken(session.sessionId) }
  })

/** An invoice of an active merchant, created by the `Invoices` use case (as the API's create does). */
export const newInvoice = (merchantId: MerchantId, draft: InvoiceDraft) =>
  Effect.flatMap(Invoices, (invoices) => Effect.orDie(invoices.create({ merchantId, billingStatus: "active" }, draft)))

/** One merchant account shared by the tests of a suite over `testServices` (no HTTP: its id and credentials). */
export class SuiteAccount extends Context.Service<SuiteAccount, Effect.Success<ReturnType<typeof newMerchant>>>()("test/SuiteAccount") {
  static readonly layer = (options: MerchantOptions = {}) => Layer.effect(SuiteAccount, newMerchant(options))
}
