/**
 * The EVM watcher's poll cost with few and with many open invoices (`npm run bench` runs it; prints
 * one JSON line). For each size, a fresh database with that many open invoices, each with a USDC
 * deposit address on ethereum (cloned with SQL from one service-created invoice), and a real
 * anvil node. After a first poll (the index's one-time load), each round sends TRANSFERS
 * transfers to watched addresses and as many to unwatched ones (one block each), then times one
 * poll of the watcher: getLogs, block headers, index lookups and the evidence written. The first
 * round warms up and is not counted.
 *
 *   watcher.ts [--quick]        DATABASE_URL set: a database of its own per size on that server; else in-memory PGlite
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { type Address, getAddress } from "viem"
import { Accounts } from "../../src/accounts/Accounts.ts"
import { ServicesLive } from "../../src/App.ts"
import { ChainWatchers } from "../../src/chains/ChainWatchers.ts"
import { AppConfig, parseConfig } from "../../src/config/AppConfig.ts"
import { DEMO_KEYS } from "../../src/demo/DemoMerchant.ts"
import { Invoices } from "../../src/invoices/Invoices.ts"
import { CheckoutSettingsRepo } from "../../src/payments/CheckoutSettingsRepo.ts"
import { startAnvil } from "../../test/support/Anvil.ts"
import { privateDatabase } from "../../test/support/PrivateDatabase.ts"

const quick = process.argv.includes("--quick")
const SIZES = [100, 100_000] as const
const ROUNDS = quick ? 3 : 7
const TRANSFERS = 20
const USDC: Address = getAddress("0x00000000000000000000000000000000000a11ce")

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const round = (value: number, digits = 2) => Number(value.toFixed(digits))

const node = await startAnvil({ chainId: 1 })
await node.installToken(USDC)
const payer = node.accounts[1]
await node.mint(USDC, payer, 10n ** 15n)

const measure = async (openInvoices: number) => {
  const database = await privateDatabase()
  const env = {
    CHECKOUT_ENV: "test",
    CHECKOUT_DEMO: "false",
    CHECKOUT_DATA_DIR: "memory://",
    DATABASE_URL: database.url,
    CHECKOUT_RPC_URL_ETHEREUM: node.rpcUrl,
    CHECKOUT_TOKEN_ETHEREUM_USDC: USDC,
    CHECKOUT_CONFIRMATIONS_ETHEREUM: "3"
  }
  const config = { ...parseConfig(env), role: "api" as const }
  const program = Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* Accounts
    const merchantId = yield* accounts.createMerchant({ email: `bench-watcher-${crypto.randomUUID()}@bench.local` })
    yield* (yield* CheckoutSettingsRepo).save(merchantId, true, {
      issuedBy: "Bench Store",
      timing: { mode: "immediate", expiresAfterMinutes: 60 },
      methods: [{ network: "ethereum", assetCode: "USDC", railType: "address_transfer", enabled: true, isDefault: true, recipientAddress: null, xpub: DEMO_KEYS.evmXpub }]
    })
    const template = yield* Effect.orDie((yield* Invoices).create({ merchantId, billingStatus: "active" }, { amountUsd: 1_000_000 }))
    // The other invoices are clones with deposit addresses of their own (random, never paid by accident).
    yield* sql`INSERT INTO invoices (id, merchant_id, amount_micros, status, timing_mode, expires_after_minutes, payable_until_at,
        received_micros, confirmed_micros, confirmations, created_at)
      SELECT gen_random_uuid(), merchant_id, amount_micros, 'awaiting_payment', timing_mode, expires_after_minutes,
        payable_until_at, 0, 0, 0, now()
      FROM invoices, generate_series(2, ${openInvoices}) WHERE id = ${template.invoice.id}`.pipe(Effect.orDie)
    yield* sql`INSERT INTO payment_options (id, invoice_id, position, rail_type, asset_code, network, token_contract, decimals,
        quoted_atomic, quote_rate, destination_address, status, is_default, required_confirmations)
      SELECT gen_random_uuid(), i.id, 0, 'address_transfer', 'USDC', 'ethereum', ${USDC}, 6, 1000000000000, '1',
        '0x' || substr(md5(i.id::text || 'a'), 1, 20) || substr(md5(i.id::text || 'b'), 1, 20), 'active', true, 3
      FROM invoices i WHERE i.id <> ${template.invoice.id}`.pipe(Effect.orDie)
    // As autovacuum would soon after such a bulk insert: without statistics the planner takes the tables for tiny.
    yield* sql`ANALYZE invoices`.pipe(Effect.orDie)
    yield* sql`ANALYZE payment_options`.pipe(Effect.orDie)
    const addresses = (yield* sql<{ address: string }>`SELECT destination_address AS address FROM payment_options
      WHERE network = 'ethereum' ORDER BY random() LIMIT ${TRANSFERS * (ROUNDS + 1)}`.pipe(Effect.orDie)).map((row) => getAddress(row.address))

    const watchers = yield* ChainWatchers
    const loadStarted = performance.now()
    yield* watchers.poll("ethereum")
    const firstPollMs = performance.now() - loadStarted

    const pollMs: Array<number> = []
    let evidence = 0
    // Round 0 warms the code paths up and is not counted.
    for (let round = 0; round <= ROUNDS; round++) {
      for (let index = 0; index < TRANSFERS; index++) {
        const to = addresses[(round * TRANSFERS + index) % addresses.length]
        yield* Effect.promise(() => node.transfer(USDC, payer, to, 1_000_000n))
        yield* Effect.promise(() => node.transfer(USDC, payer, getAddress(`0x${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}${"0".repeat(32)}`), 1_000_000n))
      }
      const started = performance.now()
      const report = yield* watchers.poll("ethereum")
      if (round > 0) pollMs.push(performance.now() - started)
      evidence += report.evidence
    }
    return { firstPollMs: round(firstPollMs), pollMsMedian: round(median(pollMs)), pollMs: pollMs.map((ms) => round(ms)), evidence }
  })
  try {
    return await Effect.runPromise(Effect.scoped(Effect.provide(program, Layer.provideMerge(ServicesLive, Layer.succeed(AppConfig, config)))))
  } finally {
    await database.drop()
  }
}

const results: Record<string, Awaited<ReturnType<typeof measure>>> = {}
for (const size of SIZES) results[size] = await measure(size)
await node.stop()
const few = results[SIZES[0]]
const many = results[SIZES[1]]
console.log(JSON.stringify({
  transfersPerPoll: TRANSFERS * 2,
  matchedPerPoll: TRANSFERS,
  rounds: ROUNDS,
  few: { openInvoices: SIZES[0], ...few },
  many: { openInvoices: SIZES[1], ...many },
  ratio: round(many.pollMsMedian / few.pollMsMedian)
}))
process.exit(0)
