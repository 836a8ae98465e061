import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Accounts } from "../../src/accounts/Accounts.ts"
import { requestHash } from "../../src/http/Idempotency.ts"
import { type Merchant, testApp, TestServer } from "../support/TestApp.ts"

/**
 * The replay of an Idempotency-Key goes through the endpoint (#54 item 2): the stored answer is what
 * the endpoint's schema encoded, and a replay decodes it with the schema of its status, so the
 * endpoint answers it again as the first time: the same status and the same bytes.
 */

interface RawAnswer {
  readonly status: number
  readonly text: string
}

it.layer(testApp(), { timeout: "120 seconds", excludeTestServices: true })("the replay of an Idempotency-Key", (it) => {
  /** A POST with the merchant's API key and a key, its answer as the bytes sent. */
  const post = (merchant: Merchant, path: string, body: unknown, key: string) =>
    Effect.flatMap(TestServer, ({ baseUrl }) =>
      Effect.promise(async (): Promise<RawAnswer> => {
        const response = await fetch(`${baseUrl}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": merchant.apiKey, "idempotency-key": key },
          body: JSON.stringify(body)
        })
        return { status: response.status, text: await response.text() }
      }))
  /** The request twice with one key: the first answer and its replay. */
  const twice = (merchant: Merchant, path: string, body: unknown) =>
    Effect.gen(function*() {
      const key = crypto.randomUUID()
      const first = yield* post(merchant, path, body, key)
      return { first, replay: yield* post(merchant, path, body, key), key }
    })
  const newMerchant = (options?: Parameters<TestServer["Service"]["createMerchant"]>[0]) => Effect.flatMap(TestServer, (server) => server.createMerchant(options))
  const storedBody = (merchant: Merchant, scope: string, key: string) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ responseStatus: number; responseBody: string }>`SELECT response_status, response_body FROM idempotency_keys
        WHERE merchant_id = ${merchant.merchantId} AND scope = ${scope} AND key = ${key}`).pipe(Effect.map((rows) => rows[0]), Effect.orDie)
  /** A finished create's record, written as the store would (a test sets the body and status it replays). */
  const storeCreate = (merchant: Merchant, key: string, body: unknown, responseStatus: number, responseBody: string) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`INSERT INTO idempotency_keys ${
        sql.insert({ merchantId: merchant.merchantId, scope: "create", key, requestHash: requestHash(body), state: "done", responseStatus, responseBody, createdAt: new Date() })
      }`).pipe(Effect.orDie)

  describe("of a success", () => {
    it.effect("answers a create, a void and a record-payment again byte for byte, timestamps included", () =>
      Effect.gen(function*() {
        const merchant = yield* newMerchant()
        const created = yield* twice(merchant, "/api/checkout/invoices", { amountUsd: 12.5, paymentTiming: { mode: "due_date", dueAfterDays: 3, gracePeriodDays: 1 } })
        expect(created.first.status).toBe(201)
        const invoice = JSON.parse(created.first.text)
        expect(invoice.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
        expect(invoice.paymentTiming.dueAt).toMatch(/Z$/)
        expect(created.replay).toEqual(created.first)
        // What is stored is the endpoint's encoded answer, as sent.
        expect(yield* storedBody(merchant, "create", created.key)).toEqual({ responseStatus: 201, responseBody: created.first.text })

        const voided = yield* twice(merchant, `/api/checkout/invoices/${invoice.id}/void`, {})
        expect(voided.first.status).toBe(200)
        expect(JSON.parse(voided.first.text).status).toBe("voided")
        expect(voided.replay).toEqual(voided.first)

        const other = JSON.parse((yield* post(merchant, "/api/checkout/invoices", { amountUsd: 3 }, crypto.randomUUID())).text)
        const recorded = yield* twice(merchant, `/api/checkout/invoices/${other.id}/record-payment`, { note: "cash" })
        expect(JSON.parse(recorded.first.text)).toMatchObject({ status: "paid_out_of_band", paidOutOfBandAt: expect.stringMatching(/Z$/) })
        expect(recorded.replay).toEqual(recorded.first)
      }))

    it.effect("answers a record stored with its keys in another order (an earlier version's) in the schema's order", () =>
      Effect.gen(function*() {
        const merchant = yield* newMerchant()
        const body = { amountUsd: 4 }
        const first = yield* post(merchant, "/api/checkout/invoices", body, crypto.randomUUID())
        const reversed = Object.fromEntries(Object.entries(JSON.parse(first.text)).reverse())
        const key = crypto.randomUUID()
        yield* storeCreate(merchant, key, body, 201, JSON.stringify(reversed))
        expect(yield* post(merchant, "/api/checkout/invoices", body, key)).toEqual(first)
      }))
  })

  describe("of an error", () => {
    it.effect("answers each status the endpoints declare again with that status and body", () =>
      Effect.gen(function*() {
        const merchant = yield* newMerchant()
        const blocked = yield* newMerchant()
        yield* Effect.flatMap(Accounts, (accounts) => accounts.setBillingStatus(blocked.merchantId, "blocked"))
        const unconfigured = yield* newMerchant({ withSettings: false })
        const nothingEnabled = yield* newMerchant({ methods: [] })
        const voided = JSON.parse((yield* post(merchant, "/api/checkout/invoices", { amountUsd: 2 }, crypto.randomUUID())).text)
        yield* post(merchant, `/api/checkout/invoices/${voided.id}/void`, {}, crypto.randomUUID())
        const missing = crypto.randomUUID()
        const cases: ReadonlyArray<readonly [Merchant, string, unknown, number]> = [
          // The payment timing's mode rules answer inside the claim: a stored 400.
          [merchant, "/api/checkout/invoices", { amountUsd: 5, paymentTiming: { mode: "immediate", gracePeriodDays: 1, dueAfterDays: 2 } }, 400],
          [blocked, "/api/checkout/invoices", { amountUsd: 5 }, 403],
          [unconfigured, "/api/checkout/invoices", { amountUsd: 5 }, 404],
          [nothingEnabled, "/api/checkout/invoices", { amountUsd: 5 }, 409],
          [merchant, `/api/checkout/invoices/${missing}/void`, {}, 404],
          [merchant, `/api/checkout/invoices/${voided.id}/void`, {}, 409],
          [merchant, `/api/checkout/invoices/${missing}/record-payment`, { note: "x" }, 404],
          [merchant, `/api/checkout/invoices/${voided.id}/record-payment`, { note: "x" }, 409]
        ]
        for (const [who, path, body, status] of cases) {
          const { first, replay } = yield* twice(who, path, body)
          expect({ path, status: first.status }).toEqual({ path, status })
          expect(JSON.parse(first.text)).toEqual({ error: expect.any(String) })
          expect(replay).toEqual(first)
        }
      }))

    it.effect("never passes a stored status the endpoint does not declare off as a 409", () =>
      Effect.gen(function*() {
        const merchant = yield* newMerchant()
        const body = { amountUsd: 6 }
        const key = crypto.randomUUID()
        // A 429 is no answer of create's use case: a record of one is not a create answer to replay.
        yield* storeCreate(merchant, key, body, 429, JSON.stringify({ error: "Rate limit exceeded. Retry after 1 seconds." }))
        const answer = yield* post(merchant, "/api/checkout/invoices", body, key)
        expect(answer.status).not.toBe(409)
        expect(answer.status).toBe(500)
      }))
  })
})
