import { Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { IdempotencyClaim } from "../../src/db/IdempotencyClaim.ts"
import { requestHash, withIdempotency } from "../../src/http/Idempotency.ts"
import { IdempotencyStore } from "../../src/http/IdempotencyStore.ts"
import { Invoices } from "../../src/invoices/Invoices.ts"
import { startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"

const LEASE_MS = 1_000
let app: TestApp
let merchant: TestMerchant

beforeAll(async () => {
  app = await startTestApp({ idempotencyLeaseMs: LEASE_MS })
  merchant = await app.createMerchant()
})
afterAll(async () => {
  await app?.close()
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const countInvoices = () =>
  app.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ count: number }>`SELECT count(*)::int AS count FROM invoices WHERE merchant_id = ${merchant.merchantId}`.pipe(
      Effect.map((rows) => rows[0].count)
    )))
const create = (body: Record<string, unknown>, key: string) => merchant.api("/api/checkout/invoices", { body, headers: { "idempotency-key": key } })

/** What a process does up to the moment it is killed: claims the key and (optionally) commits the invoice, then nothing. */
const dieWhileRunning = (key: string, body: { amountUsd: number; productName: string }, commit: boolean) =>
  app.run(Effect.gen(function*() {
    const store = yield* IdempotencyStore
    const begun = yield* store.begin(merchant.merchantId, "create", key, requestHash(body), new Date())
    expect(begun._tag).toBe("Started")
    if (!commit) return undefined
    const invoices = yield* Invoices
    const created = yield* invoices.create({ merchantId: merchant.merchantId, billingStatus: "active" }, body).pipe(
      Effect.provideService(IdempotencyClaim, { merchantId: merchant.merchantId, scope: "create", key })
    )
    return created.invoice.id
  }))

describe("an Idempotency-Key whose request died", () => {
  it("answers 'still in progress' while the lease holds, then runs the request again once, after the lease", async () => {
    const key = crypto.randomUUID()
    const body = { amountUsd: 9, productName: "Mug" }
    await dieWhileRunning(key, body, false)
    const before = await countInvoices()
    expect(await create(body, key)).toMatchObject({ status: 409, body: { error: "A request with this Idempotency-Key is still in progress; retry shortly" } })
    await sleep(LEASE_MS + 200)
    const retried = await Promise.all([create(body, key), create(body, key), create(body, key)])
    const statuses = retried.map((response) => response.status).sort()
    expect(statuses.filter((status) => status === 201)).toHaveLength(1)
    expect(statuses.filter((status) => status === 409)).toHaveLength(2)
    expect(await countInvoices()).toBe(before + 1)
    const replay = await create(body, key)
    expect(replay.status).toBe(201)
    expect(replay.body.id).toBe(retried.find((response) => response.status === 201)?.body.id)
  })

  it("replays the invoice the dead request had committed instead of creating a second one", async () => {
    const key = crypto.randomUUID()
    const body = { amountUsd: 11, productName: "Hat" }
    const committedId = await dieWhileRunning(key, body, true)
    const before = await countInvoices()
    await sleep(LEASE_MS + 200)
    const retried = await create(body, key)
    expect(retried).toMatchObject({ status: 201, body: { id: committedId, amountUsd: 11, productName: "Hat" } })
    expect(await countInvoices()).toBe(before)
    expect((await create(body, key)).body.id).toBe(committedId)
  })

  it("keeps a long-running request's claim alive by renewing its lease", async () => {
    const key = crypto.randomUUID()
    const outcome = await app.run(Effect.gen(function*() {
      const store = yield* IdempotencyStore
      const slow = withIdempotency(
        { merchantId: merchant.merchantId, scope: "slow", key, payload: {}, successStatus: 200 },
        Effect.sleep(LEASE_MS * 3).pipe(Effect.as({ done: true })),
        () => Effect.succeed({ done: false })
      )
      const fiber = yield* Effect.forkChild(slow)
      yield* Effect.sleep(LEASE_MS * 2)
      const during = yield* store.begin(merchant.merchantId, "slow", key, requestHash({}), new Date())
      const result = yield* Fiber.join(fiber)
      return { during: during._tag, result }
    }))
    expect(outcome).toEqual({ during: "InProgress", result: { done: true } })
  })
})
