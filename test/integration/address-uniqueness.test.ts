import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { DEMO_KEYS } from "../../src/demo/DemoMerchant.ts"
import { GAP_LIMIT } from "../../src/payments/BitcoinAddressPool.ts"
import { freshZpub, type MerchantOptions, suiteOptions, testApp, TestServer } from "../support/TestApp.ts"
import type { JsonBody } from "../support/Json.ts"

const createMerchant = (options?: MerchantOptions) => Effect.flatMap(TestServer, (server) => server.createMerchant(options))

const bitcoinOnly = (xpub: string) =>
  [{ network: "bitcoin", assetCode: "BTC", railType: "address_transfer", enabled: true, isDefault: true, recipientAddress: null, xpub }] as const

const emptyPool = (xpub: string) => Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM bitcoin_address_pool WHERE xpub = ${xpub} AND assigned_at IS NULL`)

it.layer(testApp(), suiteOptions)((it) => {
  describe("addresses, references and derivation indexes", () => {
    it.effect("are never shared between options or invoices, also under concurrent creates", () =>
      Effect.gen(function*() {
        const merchants = yield* Effect.all([createMerchant(), createMerchant()])
        const responses = yield* Effect.all(
          Array.from({ length: 30 }, (_, index) => merchants[index % 2].api("/api/checkout/invoices", { body: { amountUsd: 1 + index } })),
          { concurrency: "unbounded" }
        )
        expect(responses.every((response) => response.status === 201)).toBe(true)
        const options = responses.flatMap((response) => response.body.paymentOptions)
        const destinations = options.filter((option: JsonBody) => option.destinationAddress !== null && option.network !== "solana")
          .map((option: JsonBody) => `${option.network}:${option.destinationAddress}`)
        expect(new Set(destinations).size).toBe(destinations.length)
        const references = options.filter((option: JsonBody) => option.network === "solana").map((option: JsonBody) => option.optionPayload.reference)
        expect(references.length).toBeGreaterThan(0)
        expect(new Set(references).size).toBe(references.length)
        const contracts = options.filter((option: JsonBody) => option.railType === "wallet_contract").map((option: JsonBody) => option.optionPayload.contractAddress)
        expect(new Set(contracts).size).toBe(contracts.length)
        // this suite's invoices only: on a shared PostgreSQL, other suites derive from keys of their own
        const invoiceIds = responses.map((response) => response.body.id as string)
        const rows = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql<{ network: string; derivationIndex: string | null }>`SELECT network, derivation_index FROM payment_options
              WHERE derivation_index IS NOT NULL AND invoice_id = ANY(${invoiceIds}::uuid[])`)
        const evmIndexes = rows.filter((row) => row.network !== "bitcoin").map((row) => `${row.network}:${row.derivationIndex}`)
        expect(evmIndexes.length).toBeGreaterThanOrEqual(responses.length)
        expect(new Set(evmIndexes).size).toBe(evmIndexes.length)
        // one invoice's deposit options on arbitrum and base (same xpub) share one address; no other invoice has it
        for (const response of responses) {
          const [arbitrum, base] = ["arbitrum", "base"].map((network) => response.body.paymentOptions.find((option: JsonBody) => option.network === network).destinationAddress)
          expect(arbitrum).toBe(base)
        }
        const perInvoice = responses.map((response) => response.body.paymentOptions.find((option: JsonBody) => option.network === "base").destinationAddress)
        expect(new Set(perInvoice).size).toBe(perInvoice.length)
        // bitcoin indexes are per merchant key (each test merchant has its own zpub): their addresses are checked above
      }))
  })

  describe("bitcoin address pool", () => {
    it.effect("is filled to the gap limit when settings are saved", () =>
      Effect.gen(function*() {
        const xpub = freshZpub()
        yield* createMerchant({ methods: bitcoinOnly(xpub) })
        const free = yield* Effect.flatMap(SqlClient.SqlClient,
          (sql) => sql<{ count: number }>`SELECT count(*)::int AS count FROM bitcoin_address_pool WHERE xpub = ${xpub} AND assigned_at IS NULL`)
        expect(free[0].count).toBe(GAP_LIMIT)
      }))

    it.effect("answers 503 with the retry message while addresses are being prepared, then recovers", () =>
      Effect.gen(function*() {
        const xpub = freshZpub()
        const merchant = yield* createMerchant({ methods: bitcoinOnly(xpub) })
        // an emptied pool is a pool whose preparation is still under way
        yield* emptyPool(xpub)
        const preparing = yield* merchant.api("/api/checkout/invoices", { body: { amountUsd: 5 }, headers: { "idempotency-key": "btc-1" } })
        expect(preparing.status).toBe(503)
        expect(preparing.body.error).toMatch(/Bitcoin address preparation is in progress.*Retry shortly with the same Idempotency-Key/)
        let retried = preparing
        for (let attempt = 0; attempt < 50 && retried.status === 503; attempt++) {
          yield* Effect.sleep("100 millis")
          retried = yield* merchant.api("/api/checkout/invoices", { body: { amountUsd: 5 }, headers: { "idempotency-key": "btc-1" } })
        }
        expect(retried.status).toBe(201)
        expect(retried.body.paymentOptions[0].network).toBe("bitcoin")
      }))

    it.effect("leaves bitcoin out while preparing when another method can serve", () =>
      Effect.gen(function*() {
        const xpub = freshZpub()
        const merchant = yield* createMerchant({
          methods: [...bitcoinOnly(xpub), { network: "base", assetCode: "USDC", railType: "address_transfer", enabled: true, isDefault: false, recipientAddress: null,
            xpub: DEMO_KEYS.evmXpub }]
        })
        yield* emptyPool(xpub)
        const response = yield* merchant.api("/api/checkout/invoices", { body: { amountUsd: 5 } })
        expect(response.status).toBe(201)
        expect(response.body.paymentOptions.map((option: JsonBody) => option.network)).not.toContain("bitcoin")
        expect(response.body.paymentOptions.filter((option: JsonBody) => option.isDefault)).toHaveLength(1)
      }))
  })
})
