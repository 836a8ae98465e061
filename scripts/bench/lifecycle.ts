/**
 * The lifecycle engine in process against the database: evidence events per second through the
 * ingestion entry point, and the time to sweep due invoices. Prints one JSON line.
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { ServicesLive } from "../../src/App.ts"
import { AppConfig, parseConfig } from "../../src/config/AppConfig.ts"
import { DeadlineSweeper } from "../../src/invoices/DeadlineSweeper.ts"
import { Invoices } from "../../src/invoices/Invoices.ts"
import { PaymentEvidence } from "../../src/invoices/PaymentEvidence.ts"
import { seedMerchant } from "./seed.ts"

const quick = process.argv.includes("--quick")
const run = Date.now().toString(16)
const INVOICES = quick ? 200 : 1_000
const EVENTS = quick ? 2_000 : 10_000
const DUE = quick ? 2_000 : 10_000

const config = { ...parseConfig({ ...process.env, CHECKOUT_ENV: "test", CHECKOUT_DATA_DIR: "memory://" }), role: "api" as const }

const program = Effect.gen(function*() {
  const { merchantId } = yield* seedMerchant
  const invoices = yield* Invoices
  const evidence = yield* PaymentEvidence
  const sweeper = yield* DeadlineSweeper
  const sql = yield* SqlClient.SqlClient

  const created = yield* Effect.forEach(
    Array.from({ length: INVOICES }),
    () => Effect.orDie(invoices.create({ merchantId, billingStatus: "active" }, { amountUsd: 1_000 })),
    { concurrency: 8 }
  )
  const options = created.map((parts) => parts.options.find((option) => option.network === "base")!.id)
  const started = performance.now()
  yield* Effect.forEach(
    Array.from({ length: EVENTS }, (_, index) => index),
    (index) =>
      Effect.orDie(evidence.record({
        paymentOptionId: options[index % options.length],
        transactionHash: `0xbench${run}${index}`,
        outputIndex: 0,
        amountAtomic: 1_000_000n,
        confirmations: index % 3,
        observedAt: new Date()
      })),
    { concurrency: 16, discard: true }
  )
  const evidenceSeconds = (performance.now() - started) / 1000

  const template = created[0].invoice.id
  yield* sql`INSERT INTO invoices SELECT gen_random_uuid(), merchant_id, amount_micros, 'awaiting_payment', timing_mode,
    expires_after_minutes, due_after_days, grace_period_days, due_at, now() - interval '1 minute', product_name, issued_by,
    bill_to, redirect_url, merchant_reference, customer_id, customer_email, metadata, NULL, NULL, NULL, 0, 0, 0, NULL, NULL,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, now(), NULL
    FROM invoices, generate_series(1, ${DUE}) WHERE id = ${template}`.pipe(Effect.orDie)
  const sweepStarted = performance.now()
  const swept = yield* sweeper.sweep()
  const sweepSeconds = (performance.now() - sweepStarted) / 1000
  return {
    invoices: INVOICES,
    events: EVENTS,
    evidenceEventsPerSecond: Math.round(EVENTS / evidenceSeconds),
    dueInvoices: DUE,
    swept,
    sweepSeconds: Number(sweepSeconds.toFixed(2)),
    sweptPerSecond: Math.round(swept / sweepSeconds)
  }
})

const result = await Effect.runPromise(
  Effect.scoped(Effect.provide(program, Layer.provideMerge(ServicesLive(), Layer.succeed(AppConfig, config))))
)
console.log(JSON.stringify(result))
process.exit(0)
