import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import { IN_MEMORY_METHODS } from "../support/InMemoryInvoiceRepo.ts"
import { type Answer, suiteOptions, testApp, TestServer } from "../support/TestApp.ts"

/**
 * The spec's table where it speaks HTTP, over the listening server: Idempotency-Key replays and
 * races create one invoice and write its `invoice_created` once (D18), and the refusals of the
 * table (S3: void from any other status; D16: record-payment) answer 409.
 */

it.layer(testApp(), suiteOptions)("the spec's table over HTTP", (it) => {
  const setup = Effect.gen(function*() {
    const merchant = yield* Effect.flatMap(TestServer, (server) => server.createMerchant({ methods: IN_MEMORY_METHODS }))
    const sql = yield* SqlClient.SqlClient
    const count = (query: Effect.Effect<ReadonlyArray<{ readonly count: number }>, unknown>) => Effect.runPromise(query.pipe(Effect.map((rows) => rows[0].count), Effect.orDie))
    return {
      merchant,
      invoices: () => count(sql<{ count: number }>`SELECT count(*)::int AS count FROM invoices WHERE merchant_id = ${merchant.merchantId}`),
      createdEvents: (invoiceId: string) => count(sql<{ count: number }>`SELECT count(*)::int AS count FROM outbox WHERE invoice_id = ${invoiceId} AND event = 'invoice_created'`),
      create: (key: string): Promise<Answer> => Effect.runPromise(merchant.api("/api/checkout/invoices", { body: { amountUsd: 100 }, headers: { "idempotency-key": key } }))
    }
  })

  it.effect("Idempotency-Key: replays and races in any order create one invoice, and invoice_created is written once", () =>
    Effect.gen(function*() {
      const { create, createdEvents, invoices } = yield* setup
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 4 }), async (waves) => {
            const key = crypto.randomUUID()
            const before = await invoices()
            const answers: Array<Answer> = []
            // each wave: that many requests at once, after the previous wave answered
            for (const size of waves) answers.push(...await Promise.all(Array.from({ length: size }, () => create(key))))
            const created = answers.filter((answer) => answer.status === 201)
            expect(created.length).toBeGreaterThanOrEqual(1)
            expect(answers.every((answer) => answer.status === 201 || answer.status === 409)).toBe(true)
            expect(new Set(created.map((answer) => answer.body.id)).size).toBe(1)
            expect(await invoices()).toBe(before + 1)
            expect(await createdEvents(created[0].body.id)).toBe(1)
          }),
          { numRuns: 12 }
        )
      )
    }), 90_000)

  it.effect("S3 and D16: void and record-payment from a status that does not take them answer 409 and change nothing", () =>
    Effect.gen(function*() {
      const { merchant } = yield* setup
      const created = yield* merchant.api("/api/checkout/invoices", { body: { amountUsd: 100 } })
      expect(created.status).toBe(201)
      const id = created.body.id as string
      expect((yield* merchant.api(`/api/checkout/invoices/${id}/record-payment`, { body: { note: "paid by bank transfer" } })).body.status).toBe("paid_out_of_band")
      const voided = yield* merchant.api(`/api/checkout/invoices/${id}/void`, { body: {} })
      expect(voided.status).toBe(409)
      const recorded = yield* merchant.api(`/api/checkout/invoices/${id}/record-payment`, { body: { note: "again" } })
      expect(recorded.status).toBe(409)
      const detail = yield* merchant.api(`/api/checkout/invoices/${id}`)
      expect(detail.body).toMatchObject({ status: "paid_out_of_band", paidOutOfBandNote: "paid by bank transfer" })
    }))
})
