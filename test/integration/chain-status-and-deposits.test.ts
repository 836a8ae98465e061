import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parseConfig } from "../../src/config/AppConfig.ts"
import { withCursorRows } from "../support/ChainCursors.ts"
import { publicRequest, startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"

let app: TestApp

// Only bitcoin is watched here: the EVM watcher suites may share a PostgreSQL database with this one.
beforeAll(async () => {
  app = await startTestApp({ chains: { ...parseConfig({}).chains, endpoints: { bitcoin: "http://127.0.0.1:1" } } })
})
afterAll(() => app?.close())

const STATUS_FIELDS = ["chainTime", "configured", "disagreementHeight", "endpoints", "headHeight", "lagSeconds", "lastError", "lastErrorAt", "network", "processedHeight",
  "updatedAt"]

describe("GET /api/dashboard/chain-watchers", () => {
  it("lists the five networks with what their watchers published, errors without URL paths", async () => {
    const merchant = await app.createMerchant()
    const headTime = new Date("2026-11-20T12:00:00.000Z")
    const chainTime = new Date(headTime.getTime() - 42_500)
    await withCursorRows(app, async (upsert) => {
      await upsert({
        network: "bitcoin",
        processedHeight: "9007199254740993", // above 2^53: must survive as a decimal string
        chainTime,
        headHeight: "9007199254740995",
        headTime,
        lastError: "request to https://user:secret@esplora.example.com/api/KEY123/blocks/tip?apikey=KEY456 failed, reason: timeout"
      })
      await upsert({ network: "solana", processedHeight: "300000000", chainTime, headHeight: "300000000", headTime: chainTime, lastError: null })

      const { status, body } = await merchant.dashboard("/api/dashboard/chain-watchers")
      expect(status).toBe(200)
      expect(body.watchers.map((watcher: { network: string }) => watcher.network)).toEqual(["bitcoin", "ethereum", "arbitrum", "base", "solana"])
      for (const watcher of body.watchers) expect(Object.keys(watcher).sort()).toEqual(STATUS_FIELDS)
      const [bitcoin, ethereum, arbitrum, base, solana] = body.watchers
      expect(bitcoin).toEqual({
        network: "bitcoin",
        configured: true,
        headHeight: "9007199254740995",
        processedHeight: "9007199254740993",
        chainTime: chainTime.toISOString(),
        lagSeconds: 42.5,
        lastError: "request to https://esplora.example.com failed, reason: timeout",
        lastErrorAt: headTime.toISOString(),
        updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        endpoints: [],
        disagreementHeight: null
      })
      expect(JSON.stringify(body)).not.toMatch(/secret|KEY123|KEY456/)
      for (const unwatched of [ethereum, arbitrum, base]) expect(unwatched.configured).toBe(false)
      // A row of a network without an endpoint is shown (it is what its watcher last published), as not configured.
      expect(solana).toMatchObject({ configured: false, processedHeight: "300000000", headHeight: "300000000", lagSeconds: 0, lastError: null, lastErrorAt: null })
    })
  })

  it("shows a configured network without published state as nulls", async () => {
    const merchant = await app.createMerchant()
    await withCursorRows(app, async () => {
      await app.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM chain_cursors WHERE network = 'bitcoin'`))
      const { body } = await merchant.dashboard("/api/dashboard/chain-watchers")
      expect(body.watchers[0]).toEqual({
        network: "bitcoin",
        configured: true,
        headHeight: null,
        processedHeight: null,
        chainTime: null,
        lagSeconds: null,
        lastError: null,
        lastErrorAt: null,
        updatedAt: null,
        endpoints: [],
        disagreementHeight: null
      })
    }, ["bitcoin"])
  })

  it("needs a dashboard session; an API key gets 403", async () => {
    const merchant = await app.createMerchant()
    expect(await publicRequest(app.baseUrl, "/api/dashboard/chain-watchers")).toMatchObject({ status: 401 })
    expect(await merchant.api("/api/dashboard/chain-watchers")).toMatchObject({ status: 403 })
  })
})

interface DepositInput {
  readonly detectedAt: string
  readonly id?: string
  readonly reason?: string
  readonly invalidated?: boolean
}

const createInvoice = async (merchant: TestMerchant): Promise<string> => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 20 } })
  expect(created.status).toBe(201)
  return created.body.id
}

/** Inserts unmatched deposits the way the watchers record them; returns their ids in input order. */
const insertDeposits = (merchant: TestMerchant, invoiceId: string, deposits: ReadonlyArray<DepositInput>) =>
  app.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ids: Array<string> = []
    for (const [index, deposit] of deposits.entries()) {
      const id = deposit.id ?? crypto.randomUUID()
      ids.push(id)
      yield* sql`INSERT INTO unmatched_deposits ${
        sql.insert({
          id,
          merchant_id: merchant.merchantId,
          invoice_id: invoiceId,
          network: "base",
          asset_code: "USDT",
          token_contract: "0xfde4C96c8593536E31F229EA8f37b2ADa2699bb2",
          to_address: "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
          transaction_hash: `0x${crypto.randomUUID().replaceAll("-", "")}${index.toString(16).padStart(32, "0")}`,
          output_index: index,
          amount_atomic: "123456789012345678901234567890",
          block_height: String(1000 + index),
          block_hash: `0x${"cd".repeat(32)}`,
          chain_time: "2026-11-20T11:59:00.123Z",
          reason: deposit.reason ?? "wrong_network",
          detected_at: deposit.detectedAt,
          invalidated_at: deposit.invalidated === true ? "2026-11-20T13:00:00Z" : null,
          invalidation_reason: deposit.invalidated === true ? "chain_reorganization" : null
        })
      }`
    }
    return ids
  }))

const DEPOSIT_FIELDS = [
  "amountAtomic",
  "assetCode",
  "blockHash",
  "blockHeight",
  "chainTime",
  "detectedAt",
  "id",
  "invalidatedAt",
  "invalidationReason",
  "invoiceId",
  "network",
  "outputIndex",
  "reason",
  "toAddress",
  "tokenContract",
  "transactionHash"
]

describe("unmatched deposits", () => {
  it("lists the calling merchant's deposits newest first, with exact amounts and heights", async () => {
    const merchant = await app.createMerchant()
    const invoiceId = await createInvoice(merchant)
    const [older, newer] = await insertDeposits(merchant, invoiceId, [
      { detectedAt: "2026-11-20T12:00:00Z", invalidated: true },
      { detectedAt: "2026-11-20T12:05:00Z", reason: "wrong_token" }
    ])
    const { status, body } = await merchant.dashboard("/api/dashboard/unmatched-deposits")
    expect(status).toBe(200)
    expect(body.nextCursor).toBeNull()
    expect(body.data.map((deposit: { id: string }) => deposit.id)).toEqual([newer, older])
    expect(Object.keys(body.data[0]).sort()).toEqual(DEPOSIT_FIELDS)
    expect(body.data[1]).toEqual({
      id: older,
      invoiceId,
      network: "base",
      assetCode: "USDT",
      tokenContract: "0xfde4C96c8593536E31F229EA8f37b2ADa2699bb2",
      toAddress: "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
      transactionHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      outputIndex: 0,
      amountAtomic: "123456789012345678901234567890",
      blockHeight: "1000",
      blockHash: `0x${"cd".repeat(32)}`,
      chainTime: "2026-11-20T11:59:00.123Z",
      reason: "wrong_network",
      detectedAt: "2026-11-20T12:00:00.000Z",
      invalidatedAt: "2026-11-20T13:00:00.000Z",
      invalidationReason: "chain_reorganization"
    })
    expect(body.data[0]).toMatchObject({ reason: "wrong_token", invalidatedAt: null, invalidationReason: null, detectedAt: "2026-11-20T12:05:00.000Z" })
  })

  it("pages with an opaque cursor, exact to the microsecond of detection", async () => {
    const merchant = await app.createMerchant()
    const invoiceId = await createInvoice(merchant)
    // The two older deposits fall in the same millisecond: an order or a cursor cut to milliseconds would
    // tie them and fall back on the id, which is made to disagree with their order.
    const [oldest, middle, newest] = await insertDeposits(merchant, invoiceId, [
      { detectedAt: "2026-11-20T12:00:00.000100Z", id: `ffffffff-${crypto.randomUUID().slice(9)}` },
      { detectedAt: "2026-11-20T12:00:00.000200Z", id: `00000000-${crypto.randomUUID().slice(9)}` },
      { detectedAt: "2026-11-20T12:30:00Z" }
    ])
    const first = await merchant.dashboard("/api/dashboard/unmatched-deposits?limit=2")
    expect(first.status).toBe(200)
    expect(first.body.data.map((deposit: { id: string }) => deposit.id)).toEqual([newest, middle])
    expect(first.body.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/)
    const second = await merchant.dashboard(`/api/dashboard/unmatched-deposits?limit=2&cursor=${first.body.nextCursor}`)
    expect(second.status).toBe(200)
    expect(second.body.data.map((deposit: { id: string }) => deposit.id)).toEqual([oldest])
    expect(second.body.nextCursor).toBeNull()
  })

  it("breaks ties of the same detection time by id, walking one at a time", async () => {
    const merchant = await app.createMerchant()
    const invoiceId = await createInvoice(merchant)
    const ids = ["00000000-0000-4000-8000-000000000003", "00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-000000000001"]
    await insertDeposits(merchant, invoiceId, ids.map((id) => ({ id, detectedAt: "2026-11-20T12:00:00Z" })))
    const seen: Array<string> = []
    let cursor: string | null = null
    do {
      const page: { status: number; body: { data: Array<{ id: string }>; nextCursor: string | null } } = await merchant.dashboard(
        `/api/dashboard/unmatched-deposits?limit=1${cursor === null ? "" : `&cursor=${cursor}`}`
      )
      expect(page.status).toBe(200)
      seen.push(...page.body.data.map((deposit) => deposit.id))
      cursor = page.body.nextCursor
    } while (cursor !== null && seen.length < 10)
    expect(seen).toEqual([...ids].sort().reverse())
  })

  it("answers 400 for a bad cursor or limit", async () => {
    const merchant = await app.createMerchant()
    const forged = Buffer.from("yesterday|not-a-uuid").toString("base64url")
    for (const cursor of ["%%%", "abc", forged, Buffer.from(`2026-11-20T12:00:00.000Z|${crypto.randomUUID()}`).toString("base64url")]) {
      expect(await merchant.dashboard(`/api/dashboard/unmatched-deposits?cursor=${cursor}`), cursor).toMatchObject({
        status: 400,
        body: { error: "cursor is invalid" }
      })
    }
    for (const limit of ["0", "101", "-1", "ten", "1.5"]) {
      expect(await merchant.dashboard(`/api/dashboard/unmatched-deposits?limit=${limit}`), limit).toMatchObject({
        status: 400,
        body: { error: "limit must be a number from 1 to 100" }
      })
    }
    expect(await merchant.dashboard("/api/dashboard/unmatched-deposits?limit=100")).toMatchObject({ status: 200 })
  })

  it("lists one invoice's deposits; another account's invoice or an unknown one is not found", async () => {
    const merchant = await app.createMerchant()
    const other = await app.createMerchant()
    const invoiceId = await createInvoice(merchant)
    const quietInvoiceId = await createInvoice(merchant)
    const otherInvoiceId = await createInvoice(other)
    const [first, second] = await insertDeposits(merchant, invoiceId, [{ detectedAt: "2026-11-20T12:00:00Z" }, { detectedAt: "2026-11-20T12:01:00Z" }])
    const [othersDeposit] = await insertDeposits(other, otherInvoiceId, [{ detectedAt: "2026-11-20T12:02:00Z" }])

    const own = await merchant.dashboard(`/api/dashboard/invoices/${invoiceId}/unmatched-deposits`)
    expect(own.status).toBe(200)
    expect(own.body.data.map((deposit: { id: string }) => deposit.id)).toEqual([second, first])
    expect(Object.keys(own.body.data[0]).sort()).toEqual(DEPOSIT_FIELDS)
    expect(await merchant.dashboard(`/api/dashboard/invoices/${quietInvoiceId}/unmatched-deposits`)).toMatchObject({ status: 200, body: { data: [] } })

    expect(await merchant.dashboard(`/api/dashboard/invoices/${otherInvoiceId}/unmatched-deposits`)).toMatchObject({
      status: 404,
      body: { error: "Invoice not found" }
    })
    expect(await merchant.dashboard(`/api/dashboard/invoices/${crypto.randomUUID()}/unmatched-deposits`)).toMatchObject({
      status: 404,
      body: { error: "Invoice not found" }
    })
    expect(await other.dashboard(`/api/dashboard/invoices/${otherInvoiceId}/unmatched-deposits`)).toMatchObject({
      status: 200,
      body: { data: [{ id: othersDeposit }] }
    })

    // No leakage across accounts in the account-wide list either.
    const mine = await merchant.dashboard("/api/dashboard/unmatched-deposits")
    expect(mine.body.data.map((deposit: { id: string }) => deposit.id)).toEqual([second, first])
    const theirs = await other.dashboard("/api/dashboard/unmatched-deposits")
    expect(theirs.body.data.map((deposit: { id: string }) => deposit.id)).toEqual([othersDeposit])
  })

  it("needs a dashboard session; an API key gets 403", async () => {
    const merchant = await app.createMerchant()
    const invoiceId = await createInvoice(merchant)
    for (const path of ["/api/dashboard/unmatched-deposits", `/api/dashboard/invoices/${invoiceId}/unmatched-deposits`]) {
      expect(await publicRequest(app.baseUrl, path)).toMatchObject({ status: 401 })
      expect(await merchant.api(path)).toMatchObject({ status: 403 })
    }
  })

  it("is described in the OpenAPI document", async () => {
    const { body } = await publicRequest(app.baseUrl, "/api/openapi.json")
    expect(Object.keys(body.paths)).toEqual(expect.arrayContaining([
      "/api/dashboard/chain-watchers",
      "/api/dashboard/unmatched-deposits",
      "/api/dashboard/invoices/{id}/unmatched-deposits"
    ]))
    expect(Object.keys(body.components.schemas)).toEqual(expect.arrayContaining(["UnmatchedDeposit", "ChainWatcherStatus"]))
    expect(Object.keys(body.components.schemas.UnmatchedDeposit.properties).sort()).toEqual(DEPOSIT_FIELDS)
  })
})
