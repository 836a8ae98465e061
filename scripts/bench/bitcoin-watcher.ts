/**
 * The bitcoin watcher's block processing with few and with many open invoices (`npm run bench`
 * runs it; prints one JSON line). For each size, a fresh database with that many open invoices,
 * each with a BTC address (cloned with SQL from one service-created invoice), and the Esplora
 * simulator serving real transactions. Each round mines one block of BLOCK_TXS transactions
 * (PAID of them paying watched addresses), then times one poll: the raw block read and parsed,
 * every output looked up in the index, the evidence written, and the mempool read (by the txid
 * diff, since the open invoices are above the per-address limit). The first round warms up.
 *
 *   bitcoin-watcher.ts [--quick]   DATABASE_URL set: a database of its own per size on that server; else in-memory PGlite
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Accounts } from "../../src/accounts/Accounts.ts"
import { ServicesLive } from "../../src/App.ts"
import { ChainWatchers } from "../../src/chains/ChainWatchers.ts"
import { AppConfig, parseConfig } from "../../src/config/AppConfig.ts"
import { Invoices } from "../../src/invoices/Invoices.ts"
import { CheckoutSettingsRepo } from "../../src/payments/CheckoutSettingsRepo.ts"
import { startEsploraSimulator } from "../../test/support/EsploraSimulator.ts"
import { privateDatabase } from "../../test/support/PrivateDatabase.ts"
import { freshZpub } from "../../test/support/TestApp.ts"
import { p2wpkh } from "@scure/btc-signer"
import { pubECDSA, randomPrivateKeyBytes } from "@scure/btc-signer/utils.js"

const quick = process.argv.includes("--quick")
const SIZES = [100, 100_000] as const
const ROUNDS = quick ? 3 : 7
const BLOCK_TXS = quick ? 300 : 1_000
const PAID = 20

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const round = (value: number, digits = 2) => Number(value.toFixed(digits))

const measure = async (openInvoices: number) => {
  const esplora = await startEsploraSimulator({ genesisTime: Math.floor(Date.now() / 1000) - 3600, blockSeconds: 1 })
  const database = await privateDatabase()
  const env = {
    CHECKOUT_ENV: "test",
    CHECKOUT_DEMO: "false",
    CHECKOUT_DATA_DIR: "memory://",
    DATABASE_URL: database.url,
    CHECKOUT_ESPLORA_URL: esplora.url,
    CHECKOUT_CONFIRMATIONS_BITCOIN: "2"
  }
  const config = { ...parseConfig(env), role: "api" as const }
  const program = Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* Accounts
    const merchantId = yield* accounts.createMerchant({ email: `bench-btc-${crypto.randomUUID()}@bench.local` })
    yield* (yield* CheckoutSettingsRepo).save(merchantId, true, {
      issuedBy: "Bench Store",
      timing: { mode: "immediate", expiresAfterMinutes: 60 },
      methods: [{ network: "bitcoin", assetCode: "BTC", railType: "address_transfer", enabled: true, isDefault: true, recipientAddress: null, xpub: freshZpub() }]
    })
    const template = yield* Effect.orDie((yield* Invoices).create({ merchantId, billingStatus: "active" }, { amountUsd: 100 }))
    yield* sql`INSERT INTO invoices (id, merchant_id, amount_micros, status, timing_mode, expires_after_minutes, payable_until_at,
        received_micros, confirmed_micros, confirmations, created_at)
      SELECT gen_random_uuid(), merchant_id, amount_micros, 'awaiting_payment', timing_mode, expires_after_minutes,
        payable_until_at, 0, 0, 0, now()
      FROM invoices, generate_series(2, ${openInvoices}) WHERE id = ${template.invoice.id}`.pipe(Effect.orDie)
    // Real addresses (the watcher looks up what the block's outputs pay), derived here, not from the pool.
    const addresses = Array.from({ length: openInvoices - 1 }, () => p2wpkh(pubECDSA(randomPrivateKeyBytes())).address!)
    const ids = (yield* sql<{ id: string }>`SELECT id FROM invoices WHERE id <> ${template.invoice.id} ORDER BY id`.pipe(Effect.orDie)).map((row) => row.id)
    for (let start = 0; start < ids.length; start += 5_000) {
      const rows = ids.slice(start, start + 5_000).map((id, index) => ({ id, address: addresses[start + index] }))
      yield* sql`INSERT INTO payment_options (id, invoice_id, position, rail_type, asset_code, network, token_contract, decimals,
          quoted_atomic, quote_rate, destination_address, status, is_default, required_confirmations)
        SELECT gen_random_uuid(), (r->>'id')::uuid, 0, 'address_transfer', 'BTC', 'bitcoin', NULL, 8, 100000, '100000000',
          r->>'address', 'active', true, 2
        FROM json_array_elements(${JSON.stringify(rows)}::json) AS r`.pipe(Effect.orDie)
    }
    yield* sql`ANALYZE invoices`.pipe(Effect.orDie)
    yield* sql`ANALYZE payment_options`.pipe(Effect.orDie)
    const watched = [...addresses].sort(() => Math.random() - 0.5).slice(0, PAID * (ROUNDS + 1))

    const watchers = yield* ChainWatchers
    const loadStarted = performance.now()
    yield* watchers.poll("bitcoin")
    const firstPollMs = performance.now() - loadStarted

    const pollMs: Array<number> = []
    let evidence = 0
    for (let index = 0; index <= ROUNDS; index++) {
      esplora.fill(BLOCK_TXS - PAID)
      for (let paid = 0; paid < PAID; paid++) esplora.pay([{ address: watched[(index * PAID + paid) % watched.length], sats: 1_000n }])
      // Mined without a mempool sighting: the poll finds the payments in the block.
      esplora.mine(1)
      const started = performance.now()
      const report = yield* watchers.poll("bitcoin")
      if (index > 0) pollMs.push(performance.now() - started)
      evidence += report.evidence
    }
    return { firstPollMs: round(firstPollMs), pollMsMedian: round(median(pollMs)), pollMs: pollMs.map((ms) => round(ms)), evidence }
  })
  try {
    return await Effect.runPromise(Effect.scoped(Effect.provide(program, Layer.provideMerge(ServicesLive, Layer.succeed(AppConfig, config)))))
  } finally {
    await database.drop()
    await esplora.close()
  }
}

const results: Record<string, Awaited<ReturnType<typeof measure>>> = {}
for (const size of SIZES) results[size] = await measure(size)
const few = results[SIZES[0]]
const many = results[SIZES[1]]
console.log(JSON.stringify({
  blockTransactions: BLOCK_TXS,
  paidPerBlock: PAID,
  rounds: ROUNDS,
  few: { openInvoices: SIZES[0], ...few },
  many: { openInvoices: SIZES[1], ...many },
  ratio: round(many.pollMsMedian / few.pollMsMedian)
}))
process.exit(0)
