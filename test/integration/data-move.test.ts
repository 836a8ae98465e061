import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { type Address, getAddress } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Accounts } from "../../src/accounts/Accounts.ts"
import { WebhookDispatcher } from "../../src/webhooks/WebhookDispatcher.ts"
import { type AnvilNode, startAnvil, TEST_TOKENS } from "../support/Anvil.ts"
import { ethereumUsdcMethod, pollWatcherToHead } from "../support/ChainSuites.ts"
import { dataMoveSetup } from "../support/DataMoveSetup.ts"
import { refundOf, requestRefund } from "../support/RefundRequests.ts"
import { publicRequest, startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import { startWebhookReceiver, type WebhookReceiver } from "../support/WebhookReceiver.ts"

// Issue #56: `npm run cli -- data move --to <url>` carries a merchant's embedded database (paid,
// partial, refunded, pending and pending-webhook invoices) into PostgreSQL, and the service goes
// on there: same credentials, same answers, no deposit address reused, the watcher resumes from
// the moved cursor, pending webhooks go out once.

const server = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== ""
if (!server) console.log("data-move: skipped, the move's target is a PostgreSQL server (DATABASE_URL)")

const { USDC } = TEST_TOKENS
const REQUIRED = 2
const PASSWORD = "a long dashboard passphrase"
const HOOK = "/hooks/moved"

const move = dataMoveSetup("checkout-move-")
const { dataDir, newDatabase, query } = move
let node: AnvilNode
let receiver: WebhookReceiver
let payer: Address

const cli = (...args: Array<string>) => move.cli({}, ...args)
const refusal = (...args: Array<string>) => cli(...args).then(() => expect.unreachable("the command succeeded"), (error: { code: number; stderr: string }) => error)

const chainEnv = () => ({
  CHECKOUT_RPC_URL_ETHEREUM: node.rpcUrl,
  CHECKOUT_TOKEN_ETHEREUM_USDC: USDC,
  CHECKOUT_CONFIRMATIONS_ETHEREUM: String(REQUIRED)
})
const usdc = (amount: number) => BigInt(amount) * 1_000_000n
const deliver = (app: TestApp) => app.run(Effect.flatMap(WebhookDispatcher, (dispatcher) => Effect.andThen(dispatcher.runOnce, dispatcher.runOnce)))
const eventIds = () => receiver.received(HOOK).map((request) => String(request.headers["x-checkout-delivery"]))
const rawAnswer = async (app: TestApp, merchant: TestMerchant, id: string) =>
  (await fetch(`${app.baseUrl}/api/checkout/invoices/${id}`, { headers: { "x-api-key": merchant.apiKey } })).text()

beforeAll(async () => {
  if (!server) return
  node = await startAnvil({ chainId: 1 })
  await node.installToken(USDC)
  payer = node.accounts[1]
  await node.mint(USDC, payer, usdc(1_000_000))
  receiver = await startWebhookReceiver()
  receiver.on(HOOK, (response) => response.writeHead(204).end())
}, 60_000)

afterAll(async () => {
  await receiver?.close()
  await node?.stop()
  await move.cleanUp()
})

/** The merchant's business on the embedded database, left stopped, and what it answered. */
const buildSource = async () => {
  const app = await startTestApp({ databaseUrl: undefined, dataDir, webhookAllowLoopback: true }, chainEnv())
  try {
    await pollWatcherToHead(app, "ethereum")
    const merchant = await app.createMerchant({ methods: [ethereumUsdcMethod] })
    const email = `${crypto.randomUUID()}@merchant.test`
    await app.run(Effect.flatMap(Accounts, (accounts) => accounts.createMerchant({ email, password: PASSWORD })))
    expect((await merchant.dashboard("/api/dashboard/webhook-settings", { method: "PUT", body: { url: receiver.url(HOOK) } })).status).toBe(200)
    expect((await merchant.dashboard("/api/dashboard/webhook-settings/secret", { method: "POST" })).status).toBe(201)
    const create = async (amountUsd: number) => {
      const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd } })
      expect(created.status).toBe(201)
      return { id: created.body.id as string, address: getAddress(created.body.paymentOptions[0].destinationAddress) }
    }
    const [paid, partial, refunded] = [await create(10), await create(10), await create(10)]
    await node.transfer(USDC, payer, paid.address, usdc(10))
    await node.transfer(USDC, payer, partial.address, usdc(4))
    await node.transfer(USDC, payer, refunded.address, usdc(15))
    await node.mine(REQUIRED)
    await pollWatcherToHead(app, "ethereum")
    // The $5 overpaid is refunded: asked for, sent by the merchant's wallet, confirmed.
    const refundAddress = getAddress(`0x${"ab".repeat(20)}`)
    const { amountAtomic } = await requestRefund(app.baseUrl, refunded.id, refundAddress)
    await node.transfer(USDC, payer, refundAddress, amountAtomic)
    await node.mine(REQUIRED)
    await pollWatcherToHead(app, "ethereum")
    expect(await refundOf(app.baseUrl, refunded.id)).toMatchObject({ status: "completed" })
    await deliver(app)
    // Created after the last dispatch: its webhook is pending when the service stops.
    const [pendingWebhook, paidWhileStopped] = [await create(7), await create(5)]
    const ids = [paid.id, partial.id, refunded.id, pendingWebhook.id, paidWhileStopped.id]
    const answers = new Map(await Promise.all(ids.map(async (id) => [id, await rawAnswer(app, merchant, id)] as const)))
    const statuses = await Promise.all([paid, partial, refunded].map(async ({ id }) => (await merchant.api(`/api/checkout/invoices/${id}`)).body.status))
    expect(statuses).toEqual(["confirmed", "partially_paid", "confirmed"])
    const addresses = await app.run(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ address: string; index: string }>`SELECT lower(destination_address) AS address, derivation_index::text AS index FROM payment_options`)
    )
    return { app, merchant, email, answers, paidWhileStopped, pendingWebhook: pendingWebhook.id, delivered: eventIds(), addresses }
  } catch (error) {
    await app.close()
    throw error
  }
}

describe.skipIf(!server)("data move to PostgreSQL", () => {
  it("refuses while the service runs, moves every table with its checksum, and the service goes on from the moved data", async () => {
    const source = await buildSource()
    const target = await newDatabase()
    const inUse = await refusal("data", "move", "--to", target).finally(() => source.app.close())
    expect(inUse.code).toBe(1)
    expect(inUse.stderr).toMatch(/in use by process \d+.*nothing was changed/)
    expect(await query(target, "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'")).toEqual([{ n: 0 }])

    // Paid while the service is stopped: the watcher finds it from the moved cursor.
    await node.transfer(USDC, payer, source.paidWhileStopped.address, usdc(5))
    await node.mine(REQUIRED)

    const moved = (await cli("data", "move", "--to", target)).stdout
    for (const table of ["invoices", "payment_options", "payments", "refunds", "api_keys", "sessions", "instance_secrets", "derivation_counters", "chain_cursors", "chain_blocks",
      "outbox", "webhook_deliveries", "webhook_settings", "merchants"])
    {
      expect(moved).toMatch(new RegExp(`^${table} +\\d+ rows  md5 [0-9a-f]{32}  identical$`, "m"))
    }
    expect(moved).toMatch(/^invoices +5 rows/m)
    expect(moved).toMatch(/^total: \d+ tables, \d+ rows, \d+ sequences moved at schema \d{4}_\w+; every table's count and checksum read back identical/m)
    // The source is only read: moved again into another empty database, every checksum is the same.
    expect((await cli("data", "move", "--to", await newDatabase())).stdout).toBe(moved)

    const app = await startTestApp({ databaseUrl: target, webhookAllowLoopback: true }, chainEnv())
    try {
      const merchant = { ...source.merchant, api: (path: string) => publicRequest(app.baseUrl, path, { headers: { "x-api-key": source.merchant.apiKey } }) }
      for (const [id, answer] of source.answers) {
        if (id !== source.paidWhileStopped.id) expect(await rawAnswer(app, source.merchant, id)).toBe(answer)
      }
      expect((await publicRequest(app.baseUrl, "/api/dashboard/webhook-settings", { headers: { authorization: `Bearer ${source.merchant.sessionToken}` } })).status).toBe(200)
      const login = await publicRequest(app.baseUrl, "/api/auth/login", { method: "POST", headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: source.email, password: PASSWORD }) })
      expect(login.status).toBe(200)

      await pollWatcherToHead(app, "ethereum")
      const credited = (await merchant.api(`/api/checkout/invoices/${source.paidWhileStopped.id}`)).body
      expect(credited.status).toBe("confirmed")
      expect(credited.payments).toHaveLength(1)
      await pollWatcherToHead(app, "ethereum")
      expect((await merchant.api(`/api/checkout/invoices/${source.paidWhileStopped.id}`)).body.payments).toHaveLength(1)

      const fresh = await Promise.all([1, 2, 3].map(() =>
        publicRequest(app.baseUrl, "/api/checkout/invoices", {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": source.merchant.apiKey },
          body: JSON.stringify({ amountUsd: 2 })
        })
      ))
      const old = new Set(source.addresses.map((row) => row.address))
      const oldIndexes = new Set(source.addresses.map((row) => row.index))
      const newRows = await query(target,
        `SELECT lower(destination_address) AS address, derivation_index::text AS index FROM payment_options WHERE invoice_id IN (${
          fresh.map((answer) => `'${answer.body.id}'`).join(",")
        })`)
      expect(newRows).toHaveLength(3)
      for (const row of newRows) {
        expect(old.has(row.address)).toBe(false)
        expect(oldIndexes.has(row.index)).toBe(false)
      }

      await deliver(app)
      const events = eventIds()
      expect(new Set(events).size).toBe(events.length)
      expect(events.slice(0, source.delivered.length)).toEqual(source.delivered)
      // The webhooks pending at the stop (the last two invoices' creation) and the stopped payment's go out once each.
      const afterMove = receiver.received(HOOK).slice(source.delivered.length).map((request) => request.body).join("\n")
      for (const id of [source.pendingWebhook, source.paidWhileStopped.id]) expect(afterMove).toContain(id)
    } finally {
      await app.close()
    }
  }, 240_000)
})
