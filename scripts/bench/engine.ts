/**
 * The lifecycle engine of `npm run bench`, in process against the database (the project's
 * layers, no HTTP). Prints one JSON line.
 *
 * 1. Evidence: a fresh merchant, INVOICES invoices created through the Invoices service
 *    ($100 each), then EVENTS events through PaymentEvidence.record (the chain watchers' entry
 *    point) with CONCURRENCY in flight. Each invoice gets EVENTS / INVOICES events on its base
 *    USDC option, interleaved across invoices: five payments of 20 USDC, each first seen with 0
 *    confirmations and then seen again with the required confirmations, so every invoice walks
 *    awaiting_payment -> partially_paid -> payment_detected -> confirmed (status changes and
 *    outbox events included).
 * 2. Deadline: DUE invoices cloned with SQL from one service-created invoice (creating 10k
 *    through the service would take most of the time budget), moved into the past with one
 *    UPDATE, then InvoiceExpiry.expire() is timed. Anything already due in the database (e.g.
 *    invoices of an earlier bench run on the same PostgreSQL) is swept first, untimed.
 *
 *   engine.ts [--quick]        DATABASE_URL set: that server; else an in-memory PGlite
 */
import { HDKey } from "@scure/bip32"
import { writeFileSync } from "node:fs"
import { Session } from "node:inspector"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Accounts } from "../../src/accounts/Accounts.ts"
import { ServicesLive } from "../../src/App.ts"
import { AppConfig, parseConfig } from "../../src/config/AppConfig.ts"
import { DEMO_METHODS } from "../../src/demo/DemoMerchant.ts"
import { InvoiceExpiry } from "../../src/expiry/InvoiceExpiry.ts"
import { Invoices } from "../../src/invoices/Invoices.ts"
import { PaymentEvidence } from "../../src/invoices/PaymentEvidence.ts"
import { CheckoutSettingsRepo } from "../../src/payments/CheckoutSettingsRepo.ts"

const quick = process.argv.includes("--quick")
const INVOICES = quick ? 200 : 1_000
const EVENTS = quick ? 2_000 : 10_000
const DUE = quick ? 2_000 : 10_000
const CONCURRENCY = 16
const PAYMENTS_PER_INVOICE = 5

const env = {
  CHECKOUT_ENV: "test",
  CHECKOUT_DEMO: "false",
  DATABASE_URL: process.env.DATABASE_URL,
  CHECKOUT_DATA_DIR: "memory://"
}
const config = { ...parseConfig(env), role: "api" as const }

/** ENGINE_EVIDENCE_PROFILE=<file.cpuprofile>: a V8 CPU profile of the evidence phase only (read it with profile-top.ts). */
const startProfiler = async () => {
  const session = new Session()
  session.connect()
  const post = (method: string, params?: object) =>
    new Promise<any>((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))))
  await post("Profiler.enable")
  await post("Profiler.setSamplingInterval", { interval: 200 })
  await post("Profiler.start")
  return { stop: async (file: string) => writeFileSync(file, JSON.stringify((await post("Profiler.stop")).profile)) }
}

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
const round = (value: number, digits = 2) => Number(value.toFixed(digits))

const program = Effect.gen(function*() {
  const accounts = yield* Accounts
  const settings = yield* CheckoutSettingsRepo
  const invoices = yield* Invoices
  const evidence = yield* PaymentEvidence
  const expiry = yield* InvoiceExpiry
  const sql = yield* SqlClient.SqlClient

  const alreadyDue = yield* expiry.expire()

  const merchantId = yield* accounts.createMerchant({ email: `bench-engine-${crypto.randomUUID()}@bench.local` })
  const zpub = HDKey.fromMasterSeed(crypto.getRandomValues(new Uint8Array(32)), { private: 0x04b2430c, public: 0x04b24746 })
    .derive("m/84'/0'/0'").publicExtendedKey
  yield* settings.save(merchantId, true, {
    issuedBy: "Bench Store",
    timing: { mode: "immediate", expiresAfterMinutes: 60 },
    methods: DEMO_METHODS.map((method) => (method.network === "bitcoin" ? { ...method, xpub: zpub } : method))
  })

  const createStarted = performance.now()
  const created = yield* Effect.forEach(
    Array.from({ length: INVOICES }),
    () => Effect.orDie(invoices.create({ merchantId, billingStatus: "active" }, { amountUsd: 100 })),
    { concurrency: 8 }
  )
  const createSeconds = (performance.now() - createStarted) / 1000
  const targets = created.map((parts) => parts.options.find((option) => option.network === "base")!)
  const required = targets[0].requiredConfirmations
  const atomicPerPayment = targets[0].quotedAtomic / BigInt(PAYMENTS_PER_INVOICE)
  const run = crypto.randomUUID().replaceAll("-", "")

  // Event i: invoice i % INVOICES, step k = i / INVOICES; payment k/2, first seen (k even) or confirmed (k odd).
  const latencies: Array<number> = []
  const profiler = process.env.ENGINE_EVIDENCE_PROFILE === undefined ? undefined : yield* Effect.promise(() => startProfiler())
  const evidenceStarted = performance.now()
  const evidenceCpu = process.cpuUsage()
  yield* Effect.forEach(
    Array.from({ length: EVENTS }, (_, index) => index),
    (index) => {
      const invoice = index % INVOICES
      const step = Math.floor(index / INVOICES)
      const payment = Math.floor(step / 2) % PAYMENTS_PER_INVOICE
      const started = performance.now()
      return Effect.orDie(evidence.record({
        paymentOptionId: targets[invoice].id,
        transactionHash: `0x${run}${invoice.toString(16).padStart(8, "0")}${payment.toString(16).padStart(4, "0")}`,
        outputIndex: 0,
        amountAtomic: atomicPerPayment,
        confirmations: step % 2 === 0 ? 0 : required,
        observedAt: new Date()
      })).pipe(Effect.tap(() => Effect.sync(() => latencies.push(performance.now() - started))))
    },
    { concurrency: CONCURRENCY, discard: true }
  )
  const evidenceSeconds = (performance.now() - evidenceStarted) / 1000
  const evidenceCpuUsed = process.cpuUsage(evidenceCpu)
  if (profiler !== undefined) yield* Effect.promise(() => profiler.stop(process.env.ENGINE_EVIDENCE_PROFILE!))
  const ids = created.map((parts) => parts.invoice.id)
  const statuses = yield* sql<{ status: string; count: number }>`SELECT status, count(*)::int AS count FROM invoices
    WHERE id IN ${sql.in(ids)} GROUP BY status ORDER BY status`.pipe(Effect.orDie)
  const paymentRows = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM payments WHERE invoice_id IN ${sql.in(ids)}`.pipe(Effect.orDie)

  const marker = `bench-sweep-${run}`
  yield* sql`INSERT INTO invoices (id, merchant_id, amount_micros, status, timing_mode, expires_after_minutes, payable_until_at,
      product_name, issued_by, received_micros, confirmed_micros, confirmations, created_at)
    SELECT gen_random_uuid(), merchant_id, amount_micros, 'awaiting_payment', timing_mode, expires_after_minutes,
      now() + interval '1 hour', ${marker}, issued_by, 0, 0, 0, now()
    FROM invoices, generate_series(1, ${DUE}) WHERE id = ${ids[0]}`.pipe(Effect.orDie)
  yield* sql`UPDATE invoices SET payable_until_at = now() - interval '1 minute' WHERE product_name = ${marker}`.pipe(Effect.orDie)
  const sweepStarted = performance.now()
  const swept = yield* expiry.expire()
  const sweepSeconds = (performance.now() - sweepStarted) / 1000
  const expired = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM invoices
    WHERE product_name = ${marker} AND status = 'expired'`.pipe(Effect.orDie)

  latencies.sort((a, b) => a - b)
  return {
    invoices: INVOICES,
    invoiceCreatesPerSecondInProcess: Math.round(INVOICES / createSeconds),
    events: EVENTS,
    concurrency: CONCURRENCY,
    evidenceSeconds: round(evidenceSeconds),
    evidenceEventsPerSecond: Math.round(EVENTS / evidenceSeconds),
    evidenceP50Ms: round(percentile(latencies, 50)),
    evidenceP99Ms: round(percentile(latencies, 99)),
    // Share of one core this process (the engine and its SQL client) used while applying evidence; the rest of the machine is the database's.
    evidenceProcessCpuShare: round((evidenceCpuUsed.user + evidenceCpuUsed.system) / 1e6 / evidenceSeconds),
    paymentsRecorded: paymentRows[0].count,
    statusesAfter: Object.fromEntries(statuses.map((row) => [row.status, row.count])),
    alreadyDueSweptFirst: alreadyDue,
    dueInvoices: DUE,
    swept,
    expired: expired[0].count,
    sweepSeconds: round(sweepSeconds),
    sweptPerSecond: Math.round(swept / sweepSeconds)
  }
})

const result = await Effect.runPromise(
  Effect.scoped(Effect.provide(program, Layer.provideMerge(ServicesLive, Layer.succeed(AppConfig, config))))
)
console.log(JSON.stringify(result))
process.exit(0)
