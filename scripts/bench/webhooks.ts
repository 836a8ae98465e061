/**
 * Evidence to webhook, and the whole lifecycle at volume (`npm run bench` runs it on PostgreSQL;
 * prints one JSON line). The project's layers in process with the webhook dispatcher worker, and a
 * loopback receiver that verifies every signature.
 *
 * 1. Latency: LATENCY_INVOICES invoices, then one confirming payment each through
 *    PaymentEvidence.record at a fixed RATE per second (open loop); for each, the time from
 *    record() returning to the signed `invoice_confirmed` webhook arriving at the receiver.
 * 2. Volume: VOLUME invoices created through the Invoices service, paid and confirmed through
 *    PaymentEvidence.record (16 in flight), until the receiver has every `invoice_created` and
 *    `invoice_confirmed` webhook, each verified.
 *
 *   webhooks.ts [--quick]      DATABASE_URL: the PostgreSQL server (a database of its own); unset: PGlite (poll only)
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect, Layer } from "effect"
import { Accounts } from "../../src/accounts/Accounts.ts"
import { makeApp } from "../../src/App.ts"
import { AppConfig, parseConfig } from "../../src/config/AppConfig.ts"
import { Invoices } from "../../src/invoices/Invoices.ts"
import { PaymentEvidence } from "../../src/invoices/PaymentEvidence.ts"
import { CheckoutSettingsRepo } from "../../src/payments/CheckoutSettingsRepo.ts"
import { verifyWebhookSignature } from "../../src/webhooks/Signature.ts"
import { WebhookSettings } from "../../src/webhooks/WebhookSettings.ts"
import { privateDatabase } from "../../test/support/PrivateDatabase.ts"

const quick = process.argv.includes("--quick")
const RATE = 200
const LATENCY_INVOICES = quick ? 600 : 2_000
const VOLUME = quick ? 2_000 : 10_000

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
const round = (value: number, digits = 1) => Number(value.toFixed(digits))

/** The receiver: verifies each signature, and records when each (invoice, event) arrived. */
let secret = ""
const arrivals = new Map<string, number>()
let badSignatures = 0
const receiver = createServer((request, response) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => {
    const at = performance.now()
    const body = Buffer.concat(chunks).toString("utf8")
    if (!verifyWebhookSignature(body, String(request.headers["x-checkout-signature"]), secret)) badSignatures++
    else {
      const { event, invoice } = JSON.parse(body)
      const key = `${invoice.id}:${event}`
      if (!arrivals.has(key)) arrivals.set(key, at)
    }
    response.writeHead(200).end()
  })
})
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`

const database = await privateDatabase()
const env = {
  CHECKOUT_ENV: "test",
  CHECKOUT_DEMO: "false",
  CHECKOUT_DATA_DIR: "memory://",
  DATABASE_URL: database.url,
  CHECKOUT_WEBHOOK_ALLOW_LOOPBACK: "true",
  CHECKOUT_DB_MULTIPLEX: process.env.CHECKOUT_DB_MULTIPLEX ?? "true"
}
// The workers role: the services and the background workers (the webhook dispatcher among them), no HTTP server.
const config = { ...parseConfig(env), role: "workers" as const }

const waitFor = (keys: ReadonlyArray<string>, timeoutMs: number) =>
  Effect.promise(async () => {
    const deadline = Date.now() + timeoutMs
    while (keys.some((key) => !arrivals.has(key)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    return keys.filter((key) => arrivals.has(key)).length
  })

const program = Effect.gen(function*() {
  const accounts = yield* Accounts
  const invoices = yield* Invoices
  const evidence = yield* PaymentEvidence
  const merchantId = yield* accounts.createMerchant({ email: `bench-webhooks-${crypto.randomUUID()}@bench.local` })
  yield* (yield* CheckoutSettingsRepo).save(merchantId, true, {
    issuedBy: "Bench Store",
    timing: { mode: "immediate", expiresAfterMinutes: 60 },
    methods: [{ network: "base", assetCode: "USDC", railType: "wallet_contract", enabled: true, isDefault: true, recipientAddress: "0x000000000000000000000000000000000000dEaD",
      xpub: null }]
  })
  const settings = yield* WebhookSettings
  yield* Effect.orDie(settings.save(merchantId, receiverUrl, ["invoice_created", "invoice_confirmed"]))
  secret = yield* settings.rotateSecret(merchantId)

  const createAll = (count: number) =>
    Effect.forEach(Array.from({ length: count }), () => Effect.orDie(invoices.create({ merchantId, billingStatus: "active" }, { amountUsd: 10 })), { concurrency: 8 })
  const pay = (created: { options: ReadonlyArray<{ id: string; quotedAtomic: bigint; requiredConfirmations: number }> }, index: number, run: string) =>
    Effect.orDie(evidence.record({
      paymentOptionId: created.options[0].id,
      transactionHash: `0x${run}${index.toString(16).padStart(8, "0")}`,
      outputIndex: 0,
      amountAtomic: created.options[0].quotedAtomic,
      confirmations: created.options[0].requiredConfirmations,
      observedAt: new Date()
    }))

  // 1. Latency at a fixed offered rate.
  const forLatency = yield* createAll(LATENCY_INVOICES)
  yield* waitFor(forLatency.map((created) => `${created.invoice.id}:invoice_created`), 60_000)
  const run = crypto.randomUUID().replaceAll("-", "")
  const recorded = new Map<string, number>()
  const started = performance.now()
  yield* Effect.forEach(forLatency, (created, index) =>
    Effect.gen(function*() {
      const due = started + (index * 1000) / RATE
      const wait = due - performance.now()
      if (wait > 0) yield* Effect.sleep(`${Math.round(wait)} millis`)
      yield* pay(created, index, run)
      recorded.set(created.invoice.id, performance.now())
    }), { concurrency: "unbounded", discard: true })
  const confirmedKeys = forLatency.map((created) => `${created.invoice.id}:invoice_confirmed`)
  const delivered = yield* waitFor(confirmedKeys, 60_000)
  const latencies = forLatency.filter((created) => arrivals.has(`${created.invoice.id}:invoice_confirmed`))
    .map((created) => arrivals.get(`${created.invoice.id}:invoice_confirmed`)! - recorded.get(created.invoice.id)!)
    .sort((a, b) => a - b)

  // 2. The whole lifecycle at volume.
  const volumeStarted = performance.now()
  const forVolume = yield* createAll(VOLUME)
  const createdSeconds = (performance.now() - volumeStarted) / 1000
  const run2 = crypto.randomUUID().replaceAll("-", "")
  yield* Effect.forEach(forVolume, (created, index) => pay(created, index, run2), { concurrency: 16, discard: true })
  const paidSeconds = (performance.now() - volumeStarted) / 1000
  const volumeKeys = forVolume.flatMap((created) => [`${created.invoice.id}:invoice_created`, `${created.invoice.id}:invoice_confirmed`])
  const volumeDelivered = yield* waitFor(volumeKeys, 120_000)
  const volumeSeconds = (performance.now() - volumeStarted) / 1000

  return {
    database: database.url === undefined ? "pglite" : "postgresql",
    latency: {
      rate: RATE,
      events: LATENCY_INVOICES,
      delivered,
      p50Ms: round(percentile(latencies, 50)),
      p99Ms: round(percentile(latencies, 99)),
      maxMs: round(latencies.at(-1) ?? 0)
    },
    volume: {
      invoices: VOLUME,
      createdSeconds: round(createdSeconds),
      paidSeconds: round(paidSeconds),
      totalSeconds: round(volumeSeconds),
      webhooksExpected: volumeKeys.length,
      webhooksDelivered: volumeDelivered
    },
    badSignatures
  }
})

try {
  const result = await Effect.runPromise(Effect.scoped(Effect.provide(program, makeApp(Layer.succeed(AppConfig, config)))))
  console.log(JSON.stringify(result))
} finally {
  await database.drop()
  receiver.close()
}
process.exit(0)
