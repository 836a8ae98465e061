import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeWatchIndex, type WatchIndex } from "../../src/chains/WatchedOptions.ts"
import { DEMO_KEYS } from "../../src/demo/DemoMerchant.ts"
import { startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import { privateDatabase } from "../support/PrivateDatabase.ts"

let app: TestApp
let merchant: TestMerchant
let database: Awaited<ReturnType<typeof privateDatabase>>

const evmIndex = () =>
  app.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* makeWatchIndex({
      networks: ["ethereum", "arbitrum", "base"],
      key: sql`lower(COALESCE(o.option_payload->>'contractAddress', o.destination_address))`,
      retentionMillis: 86_400_000
    })
  }))

const createInvoice = async () => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 2 } })
  expect(created.status).toBe(201)
  return {
    id: created.body.id as string,
    address: String(created.body.paymentOptions.find((option: any) => option.railType === "address_transfer").destinationAddress).toLowerCase()
  }
}

const refresh = (index: WatchIndex) => app.run(index.refresh)

beforeAll(async () => {
  database = await privateDatabase()
  app = await startTestApp({}, database.url === undefined ? {} : { DATABASE_URL: database.url })
  merchant = await app.createMerchant({
    methods: [
      { network: "base", assetCode: "USDC", railType: "address_transfer", enabled: true, isDefault: true, recipientAddress: null, xpub: DEMO_KEYS.evmXpub },
      { network: "ethereum", assetCode: "USDC", railType: "wallet_contract", enabled: true, isDefault: false, recipientAddress: DEMO_KEYS.evmRecipient, xpub: null }
    ]
  })
}, 120_000)

afterAll(async () => {
  await app?.close()
  await database?.drop()
})

describe("the watched-option index", () => {
  it("loads existing options at start and new ones incrementally, keyed by deposit or forwarder address", async () => {
    const before = await createInvoice()
    const index = await evmIndex()
    await refresh(index)
    expect(index.lookup(before.address)?.map((entry) => entry.invoiceId)).toEqual([before.id])

    const after = await createInvoice()
    expect(index.lookup(after.address)).toBeUndefined()
    await refresh(index)
    const entries = index.lookup(after.address)!
    expect(entries).toHaveLength(1)
    expect(entries[0]).toMatchObject({ invoiceId: after.id, network: "base", assetCode: "USDC", merchantId: merchant.merchantId })
    const detail = await merchant.api(`/api/checkout/invoices/${after.id}`)
    const forwarder = detail.body.paymentOptions.find((option: any) => option.railType === "wallet_contract")
    expect(index.lookup(forwarder.optionPayload.contractAddress.toLowerCase())?.[0]).toMatchObject({ optionId: forwarder.id, network: "ethereum" })
  })

  it("finds options whose sequence numbers commit after higher ones were read", async () => {
    const index = await evmIndex()
    await refresh(index)
    // Higher numbers seen first: the invoice's options are moved five numbers ahead of the sequence...
    const early = await createInvoice()
    await app.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE payment_options SET watch_seq = watch_seq + 5 WHERE invoice_id = ${early.id}`))
    await refresh(index)
    expect(index.lookup(early.address)).toBeDefined()
    // ...and the numbers below them commit afterwards, as a slower concurrent insert's would.
    const late = await createInvoice()
    await refresh(index)
    expect(index.lookup(late.address)?.map((entry) => entry.invoiceId)).toEqual([late.id])
  })
})
