import { type Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import type { buildConnector } from "undici"
import { expect } from "vitest"
import { AppConfig } from "../../src/config/AppConfig.ts"
import type { Resolver } from "../../src/webhooks/Destination.ts"
import { WebhookConnector } from "../../src/webhooks/WebhookConnector.ts"
import { WebhookDispatcher } from "../../src/webhooks/WebhookDispatcher.ts"
import { WebhookResolver } from "../../src/webhooks/WebhookResolver.ts"
import type { AppServices, TestApp, TestMerchant } from "./TestApp.ts"
import type { JsonBody } from "./Json.ts"

export interface Network {
  readonly resolve?: Resolver
  readonly connect?: buildConnector.connector
  readonly allowLoopback?: boolean
}

/** The schedule stepped through: just before and at each retry, then long after the last. */
export const SCHEDULE: ReadonlyArray<Duration.Input> = ["59 seconds", "1 second", "299 seconds", "1 second", "899 seconds", "1 second", "2 hours"]
/** Requests a receiver has seen after the first run and after each step of SCHEDULE. */
export const RECEIPTS_ON_SCHEDULE = [1, 1, 2, 2, 3, 3, 4, 4]

export const newPath = () => `/hooks/${crypto.randomUUID()}`

export const gapsBetween = (attempts: ReadonlyArray<{ attemptedAt: string }>) =>
  attempts.slice(1).map((attempt, index) => Date.parse(attempt.attemptedAt) - Date.parse(attempts[index].attemptedAt))

/** Webhook helpers over a running test app: settings over HTTP, dispatchers under a TestClock. */
export const webhookHarness = (app: TestApp) => {
  let merchantsOfTest: Array<string> = []

  const newMerchant = async () => {
    const merchant = await app.createMerchant()
    merchantsOfTest.push(merchant.merchantId)
    return merchant
  }

  /** A test's unfinished deliveries must not be picked up by a later test whose clock runs ahead. */
  const parkDeliveries = async () => {
    const ids = merchantsOfTest
    merchantsOfTest = []
    await app.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE webhook_deliveries SET next_attempt_at = NULL WHERE status = 'pending' AND merchant_id = ANY(${ids}::uuid[])`
    }))
  }

  const configure = async (merchant: TestMerchant, url: string, enabledEvents?: Array<string>) => {
    const saved = await merchant.dashboard("/api/dashboard/webhook-settings", {
      method: "PUT",
      body: { url, ...(enabledEvents === undefined ? {} : { enabledEvents }) }
    })
    expect(saved.status).toBe(200)
    const secret = await merchant.dashboard("/api/dashboard/webhook-settings/secret", { method: "POST" })
    expect(secret.status).toBe(201)
    return secret.body.secret as string
  }

  const createInvoice = async (merchant: TestMerchant, body: Record<string, unknown> = { amountUsd: 3 }) => {
    const created = await merchant.api("/api/checkout/invoices", { body })
    expect(created.status).toBe(201)
    return created.body as { id: string }
  }

  const deliveriesOf = async (merchant: TestMerchant, query = "") => {
    const page = await merchant.dashboard(`/api/dashboard/webhook-deliveries${query}`)
    expect(page.status).toBe(200)
    return page.body.deliveries as Array<JsonBody>
  }

  /** A dispatcher as a process builds it, over this app's database, with the given network and configuration. */
  const dispatcherLayer = (network: Network) =>
    Layer.unwrap(Effect.gen(function*() {
      const config = yield* AppConfig
      const { resolve } = yield* WebhookResolver
      const { connect } = yield* WebhookConnector
      // fresh: the app's own dispatcher is memoised under the same layer
      return Layer.fresh(WebhookDispatcher.layerWithoutDependencies).pipe(Layer.provide(Layer.mergeAll(
        Layer.succeed(WebhookResolver, { resolve: network.resolve ?? resolve }),
        Layer.succeed(WebhookConnector, { connect: network.connect ?? connect }),
        Layer.succeed(AppConfig, { ...config, webhookAllowLoopback: network.allowLoopback ?? config.webhookAllowLoopback })
      )))
    }))

  const withDispatcher = (network: Network) => <A>(scenario: (dispatcher: WebhookDispatcher["Service"]) => Effect.Effect<A>) =>
    Effect.flatMap(WebhookDispatcher, scenario).pipe(Effect.provide(dispatcherLayer(network)))

  /** Runs a scenario under one TestClock that starts now, so retry delays can be stepped through. */
  const underTestClock = <A>(scenario: Effect.Effect<A, never, AppServices>) =>
    app.run(Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      return yield* scenario
    }).pipe(Effect.provide(TestClock.layer())))

  const runOnce = (network: Network = {}) => underTestClock(withDispatcher(network)((dispatcher) => dispatcher.runOnce))

  /** Runs the dispatcher now and after each delay, reporting what `observe` sees after each run. */
  const stepThrough = <A>(network: Network, delays: ReadonlyArray<Duration.Input>, observe: () => A) =>
    underTestClock(withDispatcher(network)((dispatcher) =>
      Effect.gen(function*() {
        yield* dispatcher.runOnce
        const seen = [observe()]
        for (const delay of delays) {
          yield* TestClock.adjust(delay)
          yield* dispatcher.runOnce
          seen.push(observe())
        }
        return seen
      })
    ))

  return { newMerchant, parkDeliveries, configure, createInvoice, deliveriesOf, withDispatcher, underTestClock, runOnce, stepThrough }
}

export { privateDatabase } from "./PrivateDatabase.ts"
