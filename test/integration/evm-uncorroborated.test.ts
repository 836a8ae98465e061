import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Logger, References } from "effect"
import { SqlClient } from "effect/sql"
import { type Address, getAddress } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ChainWatchers } from "../../src/chains/ChainWatchers.ts"
import { type AnvilNode, startAnvil, TEST_TOKENS } from "../support/Anvil.ts"
import { ethereumUsdcMethod } from "../support/ChainSuites.ts"
import { privateDatabase } from "../support/PrivateDatabase.ts"
import { refundOf, requestRefund } from "../support/RefundRequests.ts"
import { type RpcFront, startRpcFront } from "../support/RpcFront.ts"
import { startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import type { JsonBody } from "../support/Json.ts"

// Issue #52 item 4, what the EVM endpoint suites do not cover: two endpoints in front of one anvil,
// a (preferred) and b. A refund's transfer follows the payments' rule (uncorroborated is detected,
// never confirmed: `sent`, never `completed`, while b is down); a payment that waits longer than
// CHECKOUT_CORROBORATION_WARNING_MS (3 s here) is named in a warning; and the waiting mark survives
// a restart: the payment stays at 0 confirmations until b is back, then it is confirmed.
// The app keeps its database across a restart: a private PostgreSQL database, or an embedded one
// in a directory of its own.

const { USDC } = TEST_TOKENS
const REQUIRED = 3
const WARNING_MS = 3_000

let node: AnvilNode
let a: RpcFront
let b: RpcFront
let app: TestApp
let merchant: TestMerchant
let database: Awaited<ReturnType<typeof privateDatabase>>
let dataDir: string | undefined
let payer: Address
let merchantWallet: Address

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const usdc = (amount: number) => BigInt(amount) * 1_000_000n
const sql = <A>(run: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => app.run(Effect.flatMap(SqlClient.SqlClient, run))
const poll = () => app.run(Effect.flatMap(ChainWatchers, (watchers) => watchers.poll("ethereum")))
/** A status read from the database (the merchant's API client is bound to the first app's server). */
const statusOf = async (id: string) => (await sql((sql) => sql<{ status: string }>`SELECT status FROM invoices WHERE id = ${id}`))[0]?.status
const watcher = async () => {
  const { body } = await merchant.dashboard("/api/dashboard/chain-watchers")
  return (body.watchers as ReadonlyArray<JsonBody>).find((entry) => entry.network === "ethereum")
}

/** Polls (mining a block each time) until `done`: an endpoint back from errors may back off for many seconds. */
const pollUntil = async (done: () => Promise<boolean>, timeoutMs = 90_000) => {
  const deadline = Date.now() + timeoutMs
  while (true) {
    await node.mine(1)
    await poll().catch(() => undefined)
    if (await done()) return
    if (Date.now() > deadline) throw new Error("the condition was not reached")
    await sleep(300)
  }
}

const appEnvironment = (): Record<string, string> => ({
  ...(database.url === undefined ? { CHECKOUT_DATA_DIR: dataDir! } : { DATABASE_URL: database.url }),
  CHECKOUT_RPC_URL_ETHEREUM: `${a.url}, ${b.url}`,
  CHECKOUT_RPC_TIMEOUT_MS: "1000",
  CHECKOUT_TOKEN_ETHEREUM_USDC: USDC,
  CHECKOUT_CONFIRMATIONS_ETHEREUM: String(REQUIRED),
  CHECKOUT_CORROBORATION_WARNING_MS: String(WARNING_MS)
})

const newInvoice = async (amountUsd: number) => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd } })
  expect(created.status).toBe(201)
  return { id: created.body.id as string, address: getAddress((created.body.paymentOptions as ReadonlyArray<JsonBody>)[0].destinationAddress) }
}

beforeAll(async () => {
  node = await startAnvil({ chainId: 1 })
  await node.installToken(USDC)
  payer = node.accounts[1]
  merchantWallet = node.accounts[2]
  for (const account of [payer, merchantWallet]) await node.mint(USDC, account, usdc(1_000_000))
  ;[a, b] = await Promise.all([0, 1].map(() => startRpcFront(node.rpcUrl, "jsonrpc")))
  database = await privateDatabase()
  if (database.url === undefined) dataDir = mkdtempSync(join(tmpdir(), "evm-uncorroborated-"))
  app = await startTestApp({}, appEnvironment())
  merchant = await app.createMerchant({ methods: [ethereumUsdcMethod] })
  await node.mine(5)
  await poll()
}, 120_000)

afterAll(async () => {
  await app?.close()
  await Promise.all([a, b].map((front) => front?.close()))
  await node?.stop()
  await database?.drop()
  if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true })
})

describe("an EVM watcher with two endpoints, the second down", () => {
  it("a refund's transfer is seen as sent while alone, never completed; completed once the second endpoint is back", async () => {
    // An invoice of $10 paid $15 and confirmed while both answer: $5 to refund.
    const invoice = await newInvoice(10)
    await node.transfer(USDC, payer, invoice.address, usdc(15))
    await pollUntil(async () => (await statusOf(invoice.id)) === "confirmed")
    const refundAddress = getAddress(`0x${Buffer.from(crypto.getRandomValues(new Uint8Array(20))).toString("hex")}`)
    const { amountAtomic } = await requestRefund(app.baseUrl, invoice.id, refundAddress)

    b.mode = "error"
    const paid = await node.transfer(USDC, merchantWallet, refundAddress, amountAtomic)
    const report = await poll()
    expect(report.refundsSeen).toBe(1)
    expect(await refundOf(app.baseUrl, invoice.id)).toMatchObject({ status: "sent", transactionHash: paid.hash.toLowerCase(), completedAt: null })
    // Deeper than its required confirmations: still sent while no other endpoint can corroborate it.
    for (let round = 0; round < 3; round++) {
      await node.mine(2)
      await poll()
    }
    expect(await refundOf(app.baseUrl, invoice.id)).toMatchObject({ status: "sent", completedAt: null })
    expect((await watcher()).awaitingCorroboration.payments).toBeGreaterThanOrEqual(1)

    b.mode = "pass"
    await pollUntil(async () => (await refundOf(app.baseUrl, invoice.id)).status === "completed")
    expect(await refundOf(app.baseUrl, invoice.id)).toMatchObject({ transactionHash: paid.hash.toLowerCase() })
    await pollUntil(async () => (await watcher()).awaitingCorroboration.payments === 0)
    // Nobody blamed (an endpoint just back may still read "failing" until a head round asks it).
    for (const front of [a, b]) {
      const state = (await watcher()).endpoints.find((entry: JsonBody) => entry.endpoint === front.url)
      expect(state.refusedTransfers).toBe(0)
      expect(state.state).not.toBe("disagreeing")
    }
  })

  it("a payment waiting longer than CHECKOUT_CORROBORATION_WARNING_MS is named in a warning, once", async () => {
    const invoice = await newInvoice(3)
    b.mode = "error"
    const sent = await node.transfer(USDC, payer, invoice.address, usdc(3))
    await poll()
    expect(await statusOf(invoice.id)).toBe("payment_detected")
    const warnings: Array<{ message: string; annotations: Record<string, unknown> }> = []
    const capture = Logger.layer([
      Logger.make(({ message, logLevel, fiber }) => {
        if (logLevel !== "Warn") return
        warnings.push({
          message: (Array.isArray(message) ? message : [message]).map(String).join(" "),
          annotations: { ...fiber.getRef(References.CurrentLogAnnotations) }
        })
      })
    ], { mergeWithExisting: true })
    const pollLogged = () => app.run(Effect.flatMap(ChainWatchers, (watchers) => watchers.poll("ethereum")).pipe(Effect.provide(capture)))
    const named = () => warnings.filter((entry) => entry.annotations.transactionHash === sent.hash.toLowerCase() && entry.message.includes("corroborate"))

    const since = Date.parse((await watcher()).awaitingCorroboration.since)
    // Before the wait has passed: no warning about it (unless the machine is so slow that it passed already).
    await pollLogged()
    if (Date.now() < since + WARNING_MS) expect(named()).toEqual([])
    await sleep(WARNING_MS + 500)
    await pollLogged()
    expect(named()).toHaveLength(1)
    expect(named()[0].message).toBe("A payment has waited more than 3 seconds for another endpoint to corroborate it: it stays at 0 confirmations")
    expect(named()[0].annotations).toMatchObject({ network: "ethereum", reportedBy: a.url, disputed: false })
    // Once per payment.
    await pollLogged()
    expect(named()).toHaveLength(1)
    expect(await statusOf(invoice.id)).toBe("payment_detected")
    b.mode = "pass"
    await pollUntil(async () => (await statusOf(invoice.id)) === "confirmed")
  })

  it("across a restart: the waiting payment stays at 0 confirmations, and is confirmed once the second endpoint is back", async () => {
    const invoice = await newInvoice(3)
    b.mode = "error"
    await node.transfer(USDC, payer, invoice.address, usdc(3))
    await poll()
    expect(await statusOf(invoice.id)).toBe("payment_detected")
    await app.close()

    app = await startTestApp({}, appEnvironment())
    for (let round = 0; round < 3; round++) {
      await node.mine(2)
      await poll()
    }
    expect(await statusOf(invoice.id)).toBe("payment_detected")
    const waiting = await sql((sql) => sql<{ count: number }>`SELECT count(*)::int AS count FROM uncorroborated_transfers WHERE network = 'ethereum'`)
    expect(waiting[0].count).toBeGreaterThanOrEqual(1)

    b.mode = "pass"
    await pollUntil(async () => (await statusOf(invoice.id)) === "confirmed")
  })
})
