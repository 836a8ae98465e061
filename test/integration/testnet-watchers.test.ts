import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { type Address, getAddress } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ChainWatchers } from "../../src/chains/ChainWatchers.ts"
import { InvoiceExpiry, expiryScopes } from "../../src/expiry/InvoiceExpiry.ts"
import { makeEvmSource } from "../../src/chains/evm/EvmSource.ts"
import { type AnvilNode, startAnvil, TEST_TOKENS } from "../support/Anvil.ts"
import { bitcoinMethod, ethereumUsdcMethod, pollWatcherToHead, startChainApp } from "../support/ChainSuites.ts"
import { type EsploraSimulator, startEsploraSimulator } from "../support/EsploraSimulator.ts"
import type { TestApp, TestMerchant } from "../support/TestApp.ts"
import { testKeyOf } from "../support/TestMode.ts"

// Testnet watchers (issue #55 item 5): one anvil stands in for ethereum mainnet (chain id 1), another
// for sepolia (11155111) under CHECKOUT_TEST_RPC_URL_ETHEREUM, with a test USDC of its own. The
// testnet watcher credits test invoices only, the live one live invoices only, and neither shares
// the other's cursor, remembered blocks or evidence. The Esplora simulator stands in for bitcoin
// signet under CHECKOUT_TEST_ESPLORA_URL.
const { USDC } = TEST_TOKENS
const SEPOLIA_USDC = getAddress("0x000000000000000000000000000000000005e901")
const SEPOLIA = 11155111

let live: AnvilNode
let testnet: AnvilNode
let signet: EsploraSimulator
let app: TestApp
let payer: Address

const sql = <A>(run: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => app.run(Effect.flatMap(SqlClient.SqlClient, run))
const usdc = (amount: number) => BigInt(Math.round(amount * 1_000_000))

interface CreatedOption {
  readonly railType: string
  readonly destinationAddress: string
  readonly tokenContract: string | null
  readonly paymentUri: string | null
}

const depositOf = (body: { paymentOptions: ReadonlyArray<CreatedOption> }) => body.paymentOptions.find((option) => option.railType === "address_transfer")!

const stateOf = async (id: string) => {
  const rows = await sql((sql) =>
    sql<{ status: string; payments: string; valid: string; unmatched: string }>`SELECT i.status,
      (SELECT count(*) FROM payments p WHERE p.invoice_id = i.id)::text AS payments,
      (SELECT count(*) FROM payments p WHERE p.invoice_id = i.id AND p.invalidated_at IS NULL)::text AS valid,
      (SELECT count(*) FROM unmatched_deposits d WHERE d.invoice_id = i.id)::text AS unmatched
      FROM invoices i WHERE i.id = ${id}`
  )
  return { status: rows[0]!.status, payments: Number(rows[0]!.payments), valid: Number(rows[0]!.valid), unmatched: Number(rows[0]!.unmatched) }
}

const cursors = () =>
  sql((sql) => sql<{ network: string; processedHeight: string }>`SELECT network, processed_height::text AS processed_height FROM chain_cursors ORDER BY network`)

/** A live invoice (the merchant's live key) and a test one (a test key), each with its deposit option. */
const invoicesOf = async (merchant: TestMerchant, amountUsd: number) => {
  const { api } = await testKeyOf(app, merchant)
  const real = await merchant.api("/api/checkout/invoices", { body: { amountUsd } })
  const test = await api("/api/checkout/invoices", { body: { amountUsd } })
  expect([real.status, test.status]).toEqual([201, 201])
  expect(test.body.livemode).toBe(false)
  return {
    real: { id: real.body.id as string, address: getAddress(depositOf(real.body).destinationAddress) },
    test: { id: test.body.id as string, address: getAddress(depositOf(test.body).destinationAddress), option: depositOf(test.body) }
  }
}

const pollBoth = async () => {
  await pollWatcherToHead(app, "ethereum")
  await pollWatcherToHead(app, "ethereum:test")
}

beforeAll(async () => {
  live = await startAnvil({ chainId: 1 })
  testnet = await startAnvil({ chainId: SEPOLIA })
  await live.installToken(USDC)
  await testnet.installToken(SEPOLIA_USDC)
  payer = live.accounts[1]
  await live.mint(USDC, payer, usdc(1_000))
  await testnet.mint(SEPOLIA_USDC, payer, usdc(1_000))
  // The live chain well above the testnet: a testnet reorg's height is below every live payment.
  await live.mine(30)
  signet = await startEsploraSimulator({ signet: true })
  signet.mine(3)
  app = await startChainApp({}, {
    CHECKOUT_TEST_ESPLORA_URL: signet.url,
    CHECKOUT_CONFIRMATIONS_BITCOIN: "2",
    CHECKOUT_RPC_URL_ETHEREUM: live.rpcUrl,
    CHECKOUT_TOKEN_ETHEREUM_USDC: USDC,
    CHECKOUT_TEST_RPC_URL_ETHEREUM: testnet.rpcUrl,
    CHECKOUT_TEST_TOKEN_ETHEREUM_USDC: SEPOLIA_USDC,
    CHECKOUT_CONFIRMATIONS_ETHEREUM: "3"
  })
  await pollBoth()
  await pollWatcherToHead(app, "bitcoin:test")
}, 120_000)

afterAll(async () => {
  await app?.close()
  await live?.stop()
  await testnet?.stop()
  await signet?.close()
})

describe("the testnet watcher (anvil as sepolia)", () => {
  it("confirms a test invoice paid on the testnet, never credits a live invoice there, and leaves the live watcher alone", async () => {
    const merchant = await app.createMerchant({ methods: [ethereumUsdcMethod] })
    const { real, test } = await invoicesOf(merchant, 5)
    expect(test.option.tokenContract?.toLowerCase()).toBe(SEPOLIA_USDC.toLowerCase())
    expect(test.option.paymentUri).toContain(`@${SEPOLIA}/`)

    await testnet.transfer(SEPOLIA_USDC, payer, test.address, usdc(5))
    // The testnet's token to the live invoice's address: testnet money, never a live payment.
    await testnet.transfer(SEPOLIA_USDC, payer, real.address, usdc(5))
    await live.transfer(USDC, payer, real.address, usdc(5))
    await testnet.mine(3)
    await live.mine(3)
    await pollBoth()

    expect(await stateOf(test.id)).toEqual({ status: "confirmed", payments: 1, valid: 1, unmatched: 0 })
    expect(await stateOf(real.id)).toEqual({ status: "confirmed", payments: 1, valid: 1, unmatched: 0 })
    // Each watcher's cursor is its own chain's head.
    const heads = { live: await live.publicClient.getBlockNumber(), testnet: await testnet.publicClient.getBlockNumber() }
    expect((await cursors()).filter((cursor) => cursor.network.startsWith("ethereum"))).toEqual([
      { network: "ethereum", processedHeight: heads.live.toString() },
      { network: "ethereum:test", processedHeight: heads.testnet.toString() }
    ])
  })

  it("a testnet reorganisation invalidates the test payment it orphans, not the live payments above its height", async () => {
    const merchant = await app.createMerchant({ methods: [ethereumUsdcMethod] })
    const { real, test } = await invoicesOf(merchant, 7)
    await live.transfer(USDC, payer, real.address, usdc(7))
    await testnet.transfer(SEPOLIA_USDC, payer, test.address, usdc(7))
    await pollBoth()
    expect((await stateOf(real.id)).status).toBe("payment_detected")
    expect((await stateOf(test.id)).status).toBe("payment_detected")

    await testnet.reorg(1)
    await testnet.mine(1)
    await pollBoth()
    expect(await stateOf(test.id)).toMatchObject({ status: "awaiting_payment", payments: 1, valid: 0 })
    expect(await stateOf(real.id)).toMatchObject({ status: "payment_detected", payments: 1, valid: 1 })
    await live.mine(3)
    await pollBoth()
    expect((await stateOf(real.id)).status).toBe("confirmed")
  })

  it("shows the testnet watcher apart from the live one, in the dashboard and in /metrics", async () => {
    const merchant = await app.createMerchant()
    const { body } = await merchant.dashboard("/api/dashboard/chain-watchers")
    const ethereum = body.watchers.filter((watcher: { network: string }) => watcher.network === "ethereum")
    expect(ethereum).toEqual([
      expect.not.objectContaining({ livemode: expect.anything() }),
      expect.objectContaining({ livemode: false, configured: true, processedHeight: (await testnet.publicClient.getBlockNumber()).toString() })
    ])
    expect(ethereum[0].processedHeight).toBe((await live.publicClient.getBlockNumber()).toString())
    const metrics = await (await fetch(`${app.baseUrl}/metrics`)).text()
    expect(metrics).toMatch(/checkout_chain_processed_height\{network="ethereum"\}/)
    expect(metrics).toMatch(/checkout_chain_processed_height\{network="ethereum:test"\}/)
  })

  it("holds a test invoice's expiry on its lagging testnet watcher, while a live invoice whose live watcher is current expires", async () => {
    const merchant = await app.createMerchant({ methods: [ethereumUsdcMethod] })
    const { real, test } = await invoicesOf(merchant, 4)
    await pollBoth()
    const chainTimeOf = async (key: string) => (await sql((sql) => sql<{ chainTime: Date }>`SELECT chain_time FROM chain_cursors WHERE network = ${key}`))[0]!.chainTime
    // Both deadlines just before what the live watcher has processed; the testnet watcher an hour behind them.
    const deadline = new Date(Math.min((await chainTimeOf("ethereum")).getTime(), Date.now()) - 1_000)
    await sql((sql) => sql`UPDATE invoices SET payable_until_at = ${deadline} WHERE id IN (${real.id}, ${test.id})`)
    const testnetTime = await chainTimeOf("ethereum:test")
    await sql((sql) => sql`UPDATE chain_cursors SET chain_time = ${new Date(deadline.getTime() - 3_600_000)} WHERE network = 'ethereum:test'`)
    const expire = () => app.run(Effect.flatMap(InvoiceExpiry, (expiry) => expiry.expire()))

    await expire()
    expect((await stateOf(real.id)).status).toBe("expired")
    expect((await stateOf(test.id)).status).toBe("awaiting_payment")

    await sql((sql) => sql`UPDATE chain_cursors SET chain_time = ${new Date(Math.max(testnetTime.getTime(), deadline.getTime()))} WHERE network = 'ethereum:test'`)
    await expire()
    expect((await stateOf(test.id)).status).toBe("expired")
  })

  it("a test invoice waits on no watcher for a network without a testnet watcher, as a live invoice on a network without a live one", () => {
    const chains = { endpoints: { ethereum: "http://live" }, testEndpointLists: { bitcoin: ["http://signet"], base: ["http://base-sepolia"] } }
    expect(expiryScopes(chains)).toEqual([
      { network: "ethereum", livemode: true },
      { network: "bitcoin", livemode: false },
      { network: "base", livemode: false }
    ])
  })

  it("reads a testnet endpoint only when it answers the testnet's chain id", async () => {
    const sourceAt = (rpcUrl: string) =>
      makeEvmSource({ network: "ethereum", rpcUrl, tokens: new Map([[SEPOLIA_USDC.toLowerCase(), "USDC"]]), chainId: SEPOLIA, maxLogRange: 100, timeoutMs: 5_000 })
    const wrong = await Effect.runPromise(Effect.flip(sourceAt(live.rpcUrl).head))
    expect(wrong.message).toContain(`answers chain id 1, not ${SEPOLIA}`)
    expect((await Effect.runPromise(sourceAt(testnet.rpcUrl).head)).height).toBe(await testnet.publicClient.getBlockNumber())
  })

  it("in production, reads a live EVM endpoint only when it answers its mainnet's chain id", async () => {
    // The chain-id-1 anvil is a right ethereum endpoint and a wrong base one (base is 8453).
    const production = await startChainApp({ env: "production" }, { CHECKOUT_RPC_URL_ETHEREUM: live.rpcUrl, CHECKOUT_RPC_URL_BASE: live.rpcUrl })
    try {
      expect((await pollWatcherToHead(production, "ethereum")).processedHeight).toBe(await live.publicClient.getBlockNumber())
      const failed = await production.run(Effect.flip(Effect.flatMap(ChainWatchers, (watchers) => watchers.poll("base"))))
      expect(failed.message).toContain("answers chain id 1, not 8453")
      const { body } = await (await production.createMerchant({ withSettings: false })).dashboard("/api/dashboard/chain-watchers")
      const base = body.watchers.find((watcher: { network: string }) => watcher.network === "base")
      expect(base.processedHeight).toBeNull()
      expect(JSON.stringify(base)).toContain("answers chain id 1, not 8453")
    } finally {
      await production.close()
    }
  })

  it("a bitcoin signet watcher confirms a test invoice paid to its tb1 address", async () => {
    const merchant = await app.createMerchant({ methods: [bitcoinMethod()] })
    const { api } = await testKeyOf(app, merchant)
    const created = await api("/api/checkout/invoices", { body: { amountUsd: 13 } })
    expect(created.status).toBe(201)
    const option = (created.body.paymentOptions as Array<{ network: string; destinationAddress: string; quotedAmount: number }>)
      .find((candidate) => candidate.network === "bitcoin")!
    expect(option.destinationAddress).toMatch(/^tb1/)
    signet.pay([{ address: option.destinationAddress, sats: BigInt(Math.round(option.quotedAmount * 1e8)) }])
    signet.mine(2)
    await pollWatcherToHead(app, "bitcoin:test")
    expect(await stateOf(created.body.id)).toEqual({ status: "confirmed", payments: 1, valid: 1, unmatched: 0 })
    expect((await cursors()).find((cursor) => cursor.network === "bitcoin:test")?.processedHeight).toBe(String(signet.tipHeight()))
    expect((await cursors()).map((cursor) => cursor.network)).not.toContain("bitcoin")
  })
})
