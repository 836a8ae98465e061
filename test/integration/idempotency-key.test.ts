import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import { type Answer, type Merchant, testApp, TestServer } from "../support/TestApp.ts"

/**
 * Idempotency-Key on invoice creation, over the listening server (DESIGN.md, API decisions): the
 * same key and body replay the stored status and body; the same key with another body answers
 * 409; concurrent requests with one key create one invoice.
 */

const MISMATCH = "Idempotency-Key was already used with a different request body"
const IN_PROGRESS = "A request with this Idempotency-Key is still in progress; retry shortly"

const word = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9 .,'-]{0,30}[A-Za-z0-9]$/)

/**
 * Create bodies that pass request validation (no nulls, no surrounding blanks: two of them must
 * never decode to the same request), some of which the use case refuses with a 4xx of its own.
 */
const bodyArb = fc.record({
  amountUsd: fc.integer({ min: 1, max: 5_000_000 }).map((cents) => cents / 100),
  productName: word,
  merchantReference: word,
  metadata: fc.dictionary(fc.stringMatching(/^[a-z]{1,8}$/), word, { maxKeys: 3 }),
  paymentTiming: fc.oneof(
    fc.record({ mode: fc.constant("immediate"), expiresAfterMinutes: fc.integer({ min: 5, max: 600 }) }),
    fc.record({ mode: fc.constant("due_date"), dueAfterDays: fc.integer({ min: 1, max: 60 }), gracePeriodDays: fc.integer({ min: 0, max: 10 }) }),
    // no due date: the use case answers 400, an answer that is stored and replayed like a success
    fc.constant({ mode: "due_date" })
  )
}, { requiredKeys: ["amountUsd"] })

/** Fresh per run (keys are per merchant), printable ASCII up to the 255-character limit. */
const keyArb = fc.stringMatching(/^[!-~]{0,200}$/).map((suffix) => `${crypto.randomUUID()}${suffix}`.slice(0, 255))

it.layer(testApp(), { timeout: "120 seconds", excludeTestServices: true })("Idempotency-Key on POST /api/checkout/invoices", (it) => {
  const setup = Effect.gen(function*() {
    const merchant = yield* Effect.flatMap(TestServer, (server) => server.createMerchant())
    const sql = yield* SqlClient.SqlClient
    const countInvoices = () =>
      Effect.runPromise(sql<{ count: number }>`SELECT count(*)::int AS count FROM invoices WHERE merchant_id = ${merchant.merchantId}`.pipe(
        Effect.map((rows) => rows[0].count),
        Effect.orDie
      ))
    const create = (body: unknown, key: string): Promise<Answer> => Effect.runPromise(merchant.api("/api/checkout/invoices", { body, headers: { "idempotency-key": key } }))
    return { merchant: merchant satisfies Merchant, countInvoices, create }
  })

  it.effect("the same key and body answer the first answer again, status and body, and create nothing more", () =>
    Effect.gen(function*() {
      const { countInvoices, create } = yield* setup
      const statuses = new Set<number>()
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(bodyArb, keyArb, fc.integer({ min: 1, max: 3 }), async (body, key, repeats) => {
            const before = await countInvoices()
            const first = await create(body, key)
            expect([201, 400]).toContain(first.status)
            statuses.add(first.status)
            for (let repeat = 0; repeat < repeats; repeat++) {
              const again = await create(body, key)
              expect({ status: again.status, body: again.body }).toEqual({ status: first.status, body: first.body })
            }
            expect(await countInvoices()).toBe(before + (first.status === 201 ? 1 : 0))
          }),
          { numRuns: 30 }
        )
      )
      // both kinds of stored answer were replayed
      expect([...statuses].sort()).toEqual([201, 400])
    }), 60_000)

  it.effect("the same key with any other body answers 409, and the first answer stays stored", () =>
    Effect.gen(function*() {
      const { countInvoices, create } = yield* setup
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(bodyArb, bodyArb, keyArb, async (body, other, key) => {
            fc.pre(JSON.stringify(body) !== JSON.stringify(other))
            const first = await create(body, key)
            const before = await countInvoices()
            expect(await create(other, key)).toMatchObject({ status: 409, body: { error: MISMATCH } })
            expect(await countInvoices()).toBe(before)
            const replay = await create(body, key)
            expect({ status: replay.status, body: replay.body }).toEqual({ status: first.status, body: first.body })
          }),
          { numRuns: 30 }
        )
      )
    }), 60_000)

  it.effect("concurrent duplicates with one key create exactly one invoice, and every answer is it or 'still in progress'", () =>
    Effect.gen(function*() {
      const { countInvoices, create } = yield* setup
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            fc.integer({ min: 1, max: 500_000 }).map((cents) => ({ amountUsd: cents / 100 })),
            keyArb,
            fc.integer({ min: 2, max: 6 }),
            async (body, key, copies) => {
              const before = await countInvoices()
              const answers = await Promise.all(Array.from({ length: copies }, () => create(body, key)))
              const created = answers.filter((answer) => answer.status === 201)
              expect(created.length).toBeGreaterThanOrEqual(1)
              for (const answer of answers) {
                if (answer.status !== 201) expect(answer).toMatchObject({ status: 409, body: { error: IN_PROGRESS } })
              }
              const id = created[0].body.id
              expect(created.every((answer) => answer.body.id === id)).toBe(true)
              expect(await countInvoices()).toBe(before + 1)
              expect(await create(body, key)).toMatchObject({ status: 201, body: { id } })
            }
          ),
          { numRuns: 20 }
        )
      )
    }), 60_000)
})
