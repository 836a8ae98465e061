import { Deferred, Effect, Fiber, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { EvidenceRepo } from "../../src/invoices/EvidenceRepo.ts"
import type { PaymentWrite } from "../../src/invoices/PaymentWrite.ts"
import { type ObservedPayment, PaymentEvidence } from "../../src/invoices/PaymentEvidence.ts"
import { suiteOptions } from "../support/TestApp.ts"
import { newInvoice, SuiteAccount, testServices } from "../support/TestLayers.ts"
import { Micros } from "../../src/domain/Money.ts"

// Evidence is applied optimistically (read, then one guarded write) and falls back to the invoice's
// row lock. These tests force the races between a read and a write, and between a lock and a commit.
const server = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== ""
if (!server) console.log("evidence-races: the lock-wait cases skipped, they need a PostgreSQL server (DATABASE_URL); PGlite has one connection")

/** The repositories and the evidence use case over the database (no HTTP server), and the suite's merchant. */
const services = testServices()
const suite = SuiteAccount.layer().pipe(Layer.provideMerge(services))
type Services = Layer.Success<typeof services>

const newUsdcOption = (amountUsd: number) =>
  Effect.gen(function*() {
    const { invoice, options } = yield* newInvoice((yield* SuiteAccount).merchantId, { amountUsd })
    return { invoiceId: String(invoice.id), optionId: String(options.find((option) => option.network === "ethereum")!.id) }
  })

const txHash = () => `0x${crypto.randomUUID().replaceAll("-", "")}${crypto.randomUUID().replaceAll("-", "")}`

const observed = (paymentOptionId: string, amountAtomic: bigint): ObservedPayment => ({
  paymentOptionId,
  amountAtomic,
  transactionHash: txHash(),
  outputIndex: 0,
  confirmations: 0,
  observedAt: new Date()
})

const record = (payment: ObservedPayment) => Effect.flatMap(PaymentEvidence, (evidence) => evidence.record(payment))

const counts = (invoiceId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ payments: number; events: number; received: string }>`SELECT
      (SELECT count(*)::int FROM payments WHERE invoice_id = ${invoiceId}) AS payments,
      (SELECT count(*)::int FROM outbox WHERE invoice_id = ${invoiceId}) AS events,
      (SELECT received_micros::text FROM invoices WHERE id = ${invoiceId}) AS received`.pipe(Effect.map((rows) => rows[0]), Effect.orDie))

// A payment change described as data: one more confirmation of the invoice's existing payment.
const confirmationWrite = (paymentId: string): PaymentWrite => ({
  _tag: "UpdateConfirmations",
  paymentId,
  confirmations: 1,
  confirmedAt: null,
  placement: { _tag: "Block", height: null, hash: null }
})

/** Runs `inside` in a transaction that holds the invoice's row lock until `waiter` is seen waiting for it, then commits. */
const whileLocked = <A>(invoiceId: string, inside: Effect.Effect<unknown, unknown, Services>, waiter: Effect.Effect<A, unknown, Services>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const locked = yield* Deferred.make<number>()
    const release = yield* Deferred.make<void>()
    const holder = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
      const [{ pid }] = yield* sql<{ pid: number }>`SELECT pg_backend_pid() AS pid FROM invoices WHERE id = ${invoiceId} FOR UPDATE`
      yield* inside
      yield* Deferred.succeed(locked, pid)
      yield* Deferred.await(release)
    })))
    const holderPid = yield* Deferred.await(locked)
    const waiting = yield* Effect.forkChild(waiter)
    // Until a statement is blocked by the holder (the waiter's: nothing else touches this invoice).
    let blocked = 0
    for (let attempt = 0; attempt < 500 && blocked === 0; attempt++) {
      yield* Effect.sleep("10 millis")
      const rows = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM pg_stat_activity
        WHERE ${holderPid}::int = ANY (pg_blocking_pids(pid))`
      blocked = rows[0].count
    }
    expect(blocked).toBeGreaterThan(0)
    yield* Deferred.succeed(release, undefined)
    yield* Fiber.join(holder)
    return yield* Fiber.join(waiting)
  })

it.layer(suite, suiteOptions)((it) => {
  describe("guarded write", () => {
    it.effect("writes nothing when the invoice changed after it was read, and writes when it did not", () =>
      Effect.gen(function*() {
        const { invoiceId, optionId } = yield* newUsdcOption(50)
        const repo = yield* EvidenceRepo
        const stale = Option.getOrThrow(yield* repo.readForEvidence(optionId))
        yield* record(observed(optionId, 10_000_000n))
        const before = yield* counts(invoiceId)
        const event = [{ invoiceId: stale.invoice.id, merchantId: stale.invoice.merchantId, event: "invoice_partially_paid" as const }]
        const fresh = Option.getOrThrow(yield* repo.readForEvidence(optionId))
        const write = confirmationWrite(fresh.payments[0].id)
        const staleApplied = yield* repo.saveIfUnchanged(stale.version, write, { ...stale.invoice, receivedMicros: Micros.make(999n) }, event)
        const after = yield* counts(invoiceId)
        const freshApplied = yield* repo.saveIfUnchanged(fresh.version, write, { ...fresh.invoice, receivedMicros: Micros.make(999n) }, event)
        const final = yield* counts(invoiceId)
        expect(stale.payments).toEqual([])
        expect(before).toMatchObject({ payments: 1, received: "10000000" })
        expect(staleApplied).toBe(false)
        expect(after).toEqual(before)
        expect(freshApplied).toBe(true)
        expect(final).toEqual({ payments: 1, events: before.events + 1, received: "999" })
      }))
  })

  describe.skipIf(!server)("evidence racing a transaction that holds the invoice", () => {
    it.effect("evidence meeting a locked invoice does not wait on a shared connection: it takes the lock, and counts both payments", () =>
      Effect.gen(function*() {
        const { invoiceId, optionId } = yield* newUsdcOption(50)
        const result = yield* whileLocked(invoiceId, record(observed(optionId, 10_000_000n)), record(observed(optionId, 15_000_000n)))
        expect(result.invoice.receivedMicros).toBe(25_000_000n)
        expect(yield* counts(invoiceId)).toMatchObject({ payments: 2, received: "25000000" })
      }))

    it.effect("the evidence lock, once granted after a change committed, returns the payments that change added", () =>
      Effect.gen(function*() {
        const { invoiceId, optionId } = yield* newUsdcOption(50)
        const state = yield* whileLocked(
          invoiceId,
          record(observed(optionId, 10_000_000n)),
          Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(Effect.flatMap(EvidenceRepo, (repo) => repo.lockForEvidence(optionId))))
        ).pipe(Effect.map(Option.getOrThrow))
        expect(state.payments.map((payment) => payment.amountAtomic)).toEqual([10_000_000n])
        expect(state.invoice.receivedMicros).toBe(10_000_000n)
      }))
  })
})
