import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { makeWatchIndex } from "../../src/chains/watcher/WatchedOptions.ts"
import { DEMO_KEYS } from "../../src/demo/DemoMerchant.ts"
import { suiteOptions } from "../support/TestApp.ts"
import { inPrivateDatabase, newInvoice, SuiteAccount, testServices } from "../support/TestLayers.ts"

const evmIndexOf = (livemode: boolean) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* makeWatchIndex({
      networks: ["ethereum", "arbitrum", "base"],
      livemode,
      key: sql`lower(COALESCE(o.option_payload->>'contractAddress', o.destination_address))`,
      retentionMillis: 86_400_000
    })
  })
const evmIndex = evmIndexOf(true)

const createInvoice = Effect.gen(function*() {
  const { invoice, options } = yield* newInvoice((yield* SuiteAccount).merchantId, { amountUsd: 2 })
  return {
    id: invoice.id as string,
    address: String(options.find((option) => option.railType === "address_transfer")!.destinationAddress).toLowerCase(),
    forwarder: options.find((option) => option.railType === "wallet_contract")!
  }
})

// A database of its own: the index reads every option of every merchant in it.
const suite = SuiteAccount.layer({
  methods: [
    { network: "base", assetCode: "USDC", railType: "address_transfer", enabled: true, isDefault: true, recipientAddress: null, xpub: DEMO_KEYS.evmXpub },
    { network: "ethereum", assetCode: "USDC", railType: "wallet_contract", enabled: true, isDefault: false, recipientAddress: DEMO_KEYS.evmRecipient, xpub: null }
  ]
}).pipe(Layer.provideMerge(inPrivateDatabase((url) => testServices({}, url === undefined ? {} : { DATABASE_URL: url }))))

it.layer(suite, suiteOptions)((it) => {
  describe("the watched-option index", () => {
    it.effect("loads existing options at start and new ones incrementally, keyed by deposit or forwarder address", () =>
      Effect.gen(function*() {
        const merchant = yield* SuiteAccount
        const before = yield* createInvoice
        const index = yield* evmIndex
        yield* index.refresh
        expect(index.lookup(before.address)?.map((entry) => entry.invoiceId)).toEqual([before.id])

        const after = yield* createInvoice
        expect(index.lookup(after.address)).toBeUndefined()
        yield* index.refresh
        const entries = index.lookup(after.address)!
        expect(entries).toHaveLength(1)
        expect(entries[0]).toMatchObject({ invoiceId: after.id, network: "base", assetCode: "USDC", merchantId: merchant.merchantId })
        const forwarder = after.forwarder
        expect(index.lookup(String(forwarder.optionPayload!.contractAddress).toLowerCase())?.[0]).toMatchObject({ optionId: forwarder.id, network: "ethereum" })
      }))

    it.effect("counts an address as payable at exactly payableUntilAt (the spec's on time is at or before), not a millisecond later", () =>
      Effect.gen(function*() {
        const index = yield* evmIndex
        const invoice = yield* createInvoice
        yield* index.refresh
        const deadline = index.lookup(invoice.address)![0]!.payableUntilAt.getTime()
        expect(index.isPayable(invoice.address, deadline)).toBe(true)
        expect(index.payableKeys(deadline, 1_000_000)).toContain(invoice.address)
        expect(index.isPayable(invoice.address, deadline + 1)).toBe(false)
        expect(index.payableKeys(deadline + 1, 1_000_000)).not.toContain(invoice.address)
      }))

    it.effect("finds options whose sequence numbers commit after higher ones were read", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const index = yield* evmIndex
        yield* index.refresh
        // Higher numbers seen first: the invoice's options are moved five numbers ahead of the sequence...
        const early = yield* createInvoice
        yield* sql`UPDATE payment_options SET watch_seq = watch_seq + 5 WHERE invoice_id = ${early.id}`
        yield* index.refresh
        expect(index.lookup(early.address)).toBeDefined()
        // ...and the numbers below them commit afterwards, as a slower concurrent insert's would.
        const late = yield* createInvoice
        yield* index.refresh
        expect(index.lookup(late.address)?.map((entry) => entry.invoiceId)).toEqual([late.id])
      }))

    it.effect("a live index never holds a test invoice's options, and a test index only those (at start and incrementally)", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const asTest = (id: string) => sql`UPDATE invoices SET livemode = false WHERE id = ${id}`
        const earlierTest = yield* createInvoice
        yield* asTest(earlierTest.id)
        const earlierLive = yield* createInvoice
        const live = yield* evmIndexOf(true)
        const test = yield* evmIndexOf(false)
        yield* Effect.all([live.refresh, test.refresh])
        const laterTest = yield* createInvoice
        yield* asTest(laterTest.id)
        const laterLive = yield* createInvoice
        yield* Effect.all([live.refresh, test.refresh])
        for (const invoice of [earlierTest, laterTest]) {
          expect(live.lookup(invoice.address)).toBeUndefined()
          expect(live.lookup(String(invoice.forwarder.optionPayload!.contractAddress).toLowerCase())).toBeUndefined()
          expect(test.lookup(invoice.address)?.map((entry) => entry.invoiceId)).toEqual([invoice.id])
        }
        for (const invoice of [earlierLive, laterLive]) {
          expect(live.lookup(invoice.address)?.map((entry) => entry.invoiceId)).toEqual([invoice.id])
          expect(test.lookup(invoice.address)).toBeUndefined()
        }
      }))
  })
})
