import { describe, expect, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Fiber, Layer, Schema } from "effect"
import { HttpApiEndpoint } from "effect/http-api"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { IdempotencyClaim } from "../../src/db/IdempotencyClaim.ts"
import { CurrentMerchant } from "../../src/http/CurrentMerchant.ts"
import { requestHash, withIdempotency } from "../../src/http/Idempotency.ts"
import { IdempotencyStore } from "../../src/http/IdempotencyStore.ts"
import { Invoices } from "../../src/invoices/Invoices.ts"
import { SuiteMerchant, suiteOptions, testApp } from "../support/TestApp.ts"

const LEASE_MS = 1_000

/** An endpoint of its own for a request that runs as long as the test says (its scope is its name, `slow`). */
const SLOW_ENDPOINT = HttpApiEndpoint.post("slow", "/slow", { success: Schema.Struct({ done: Schema.Boolean }) })

const countInvoices = Effect.gen(function*() {
  const merchant = yield* SuiteMerchant
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM invoices WHERE merchant_id = ${merchant.merchantId}`
  return rows[0].count
})

const create = (body: Record<string, unknown>, key: string) =>
  Effect.flatMap(SuiteMerchant, (merchant) => merchant.api("/api/checkout/invoices", { body, headers: { "idempotency-key": key } }))

const createAll = (copies: number, body: Record<string, unknown>, key: string) => Effect.all(Array.from({ length: copies }, () => create(body, key)), { concurrency: "unbounded" })

/** What a process does up to the moment it is killed: claims the key and (optionally) commits the invoice, then nothing. */
const dieWhileRunning = (key: string, body: { amountUsd: number; productName: string }, commit: boolean) =>
  Effect.gen(function*() {
    const merchant = yield* SuiteMerchant
    const store = yield* IdempotencyStore
    const begun = yield* store.begin(merchant.merchantId, "create", key, requestHash(body), new Date())
    expect(begun._tag).toBe("Started")
    if (!commit) return undefined
    const invoices = yield* Invoices
    const created = yield* invoices.create({ merchantId: merchant.merchantId, billingStatus: "active" }, body).pipe(
      Effect.provideService(IdempotencyClaim, { merchantId: merchant.merchantId, scope: "create", key })
    )
    return created.invoice.id
  })

/** The dead process's lease runs out: its end moves into the past, as waiting out LEASE_MS would do. */
const leaseRunsOut = (key: string) =>
  Effect.gen(function*() {
    const merchant = yield* SuiteMerchant
    const sql = yield* SqlClient.SqlClient
    // A millisecond time, as the service writes: it takes an expired claim over by comparing the lease it read.
    const moved = yield* sql`UPDATE idempotency_keys SET lease_until = ${new Date(Date.now() - 1_000)}
      WHERE merchant_id = ${merchant.merchantId} AND scope = 'create' AND key = ${key} AND state = 'running' RETURNING key`
    expect(moved).toHaveLength(1)
  })

it.layer(SuiteMerchant.layer().pipe(Layer.provideMerge(testApp({ idempotencyLeaseMs: LEASE_MS }))), suiteOptions)((it) => {
  describe("an Idempotency-Key whose request died", () => {
    it.effect("answers 'still in progress' while the lease holds, then runs the request again once, after the lease", () =>
      Effect.gen(function*() {
        const key = crypto.randomUUID()
        const body = { amountUsd: 9, productName: "Mug" }
        yield* dieWhileRunning(key, body, false)
        const before = yield* countInvoices
        const running = yield* create(body, key)
        expect(running).toMatchObject({ status: 409, body: { error: "A request with this Idempotency-Key is still in progress; retry shortly" } })
        // The one 409 worth retrying says when (#52); another body under the key is not.
        expect(running.headers.get("retry-after")).toBe("1")
        const reused = yield* create({ ...body, amountUsd: 10 }, key)
        expect(reused).toMatchObject({ status: 409, body: { error: "Idempotency-Key was already used with a different request body" } })
        expect(reused.headers.get("retry-after")).toBeNull()
        yield* leaseRunsOut(key)
        const retried = yield* createAll(3, body, key)
        const statuses = retried.map((response) => response.status).sort()
        expect(statuses.filter((status) => status === 201)).toHaveLength(1)
        expect(statuses.filter((status) => status === 409)).toHaveLength(2)
        expect(yield* countInvoices).toBe(before + 1)
        const replay = yield* create(body, key)
        expect(replay.status).toBe(201)
        expect(replay.body.id).toBe(retried.find((response) => response.status === 201)?.body.id)
      }))

    it.effect("takes over a lease whose end the database holds to the microsecond (no endless compare-and-set)", () =>
      Effect.gen(function*() {
        const merchant = yield* SuiteMerchant
        const sql = yield* SqlClient.SqlClient
        const key = crypto.randomUUID()
        const body = { amountUsd: 7, productName: "Pin" }
        yield* dieWhileRunning(key, body, false)
        const before = yield* countInvoices
        const moved = yield* sql`UPDATE idempotency_keys SET lease_until = now() - interval '1 second' + interval '123 microseconds'
          WHERE merchant_id = ${merchant.merchantId} AND scope = 'create' AND key = ${key} AND state = 'running' RETURNING key`
        expect(moved).toHaveLength(1)
        expect((yield* create(body, key)).status).toBe(201)
        expect(yield* countInvoices).toBe(before + 1)
      }))

    it.effect("replays the invoice the dead request had committed instead of creating a second one", () =>
      Effect.gen(function*() {
        const key = crypto.randomUUID()
        const body = { amountUsd: 11, productName: "Hat" }
        const committedId = yield* dieWhileRunning(key, body, true)
        const before = yield* countInvoices
        yield* leaseRunsOut(key)
        const retried = yield* create(body, key)
        expect(retried).toMatchObject({ status: 201, body: { id: committedId, amountUsd: 11, productName: "Hat" } })
        expect(yield* countInvoices).toBe(before)
        expect((yield* create(body, key)).body.id).toBe(committedId)
      }))

    it.effect("keeps a long-running request's claim alive by renewing its lease", () =>
      Effect.gen(function*() {
        const merchant = yield* SuiteMerchant
        const store = yield* IdempotencyStore
        const sql = yield* SqlClient.SqlClient
        const key = crypto.randomUUID()
        const leaseUntil = Effect.map(
          sql<{ leaseUntil: Date | string | null }>`SELECT lease_until FROM idempotency_keys WHERE merchant_id = ${merchant.merchantId} AND scope = 'slow' AND key = ${key}`,
          (rows) => (rows[0]?.leaseUntil == null ? undefined : new Date(rows[0].leaseUntil).getTime())
        )
        /** Polls the stored lease end (the renewal writes it from another fiber, over the database). */
        const leaseUntilBecomes = (expected: number) =>
          Effect.gen(function*() {
            for (let attempt = 0; attempt < 500; attempt++) {
              if ((yield* leaseUntil) === expected) return
              yield* TestClock.withLive(Effect.sleep("10 millis"))
            }
            expect(yield* leaseUntil).toBe(expected)
          })

        const start = Date.now()
        yield* TestClock.setTime(start)
        const finish = yield* Deferred.make<void>()
        const slow = withIdempotency(
          { endpoint: SLOW_ENDPOINT, headers: { "idempotency-key": key }, payload: {} },
          Deferred.await(finish).pipe(Effect.as({ done: true })),
          () => Effect.succeed({ done: false })
        ).pipe(Effect.provideService(CurrentMerchant, { merchantId: merchant.merchantId, livemode: true } as CurrentMerchant["Service"]))
        const fiber = yield* Effect.forkChild(slow)
        yield* leaseUntilBecomes(start + LEASE_MS)
        // Twice the lease passes while the request runs; the claim is renewed every third of it.
        const step = Math.floor(LEASE_MS / 3)
        for (let renewal = 1; renewal <= 6; renewal++) {
          yield* TestClock.adjust(step)
          yield* leaseUntilBecomes(start + renewal * step + LEASE_MS)
        }
        const during = yield* store.begin(merchant.merchantId, "slow", key, requestHash({}), new Date(yield* Clock.currentTimeMillis))
        yield* Deferred.succeed(finish, undefined)
        const result = yield* Fiber.join(fiber)
        expect({ during: during._tag, result }).toEqual({ during: "InProgress", result: { done: true } })
      }).pipe(Effect.provide(TestClock.layer())))
  })
})
