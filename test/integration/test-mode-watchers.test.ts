import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { type Address, getAddress } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEMO_KEYS } from "../../src/demo/DemoMerchant.ts"
import { type AnvilNode, startAnvil, TEST_TOKENS } from "../support/Anvil.ts"
import { pollWatcherToHead, startChainApp } from "../support/ChainSuites.ts"
import type { TestApp, TestMerchant } from "../support/TestApp.ts"

// Test mode (issue #55): a live chain watcher never credits a test invoice, whatever is sent on the
// live chain to the test invoice's address (its addresses come from the same merchant keys).
const { USDC } = TEST_TOKENS

let live: AnvilNode
let app: TestApp
let payer: Address

const sql = <A>(run: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => app.run(Effect.flatMap(SqlClient.SqlClient, run))
const usdc = (amount: number) => BigInt(Math.round(amount * 1_000_000))

const newMerchant = () =>
  app.createMerchant({
    methods: [
      { network: "ethereum", assetCode: "USDC", railType: "address_transfer", enabled: true, isDefault: true, recipientAddress: null, xpub: DEMO_KEYS.evmXpub },
      { network: "ethereum", assetCode: "USDC", railType: "wallet_contract", enabled: true, isDefault: false, recipientAddress: DEMO_KEYS.evmRecipient, xpub: null }
    ]
  })

/** An invoice created as a live one; `test` turns it into a test invoice before any watcher reads it (test keys are another branch's). */
const createInvoice = async (merchant: TestMerchant, amountUsd: number, mode: "live" | "test") => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd } })
  expect(created.status).toBe(201)
  const id = created.body.id as string
  if (mode === "test") await sql((sql) => sql`UPDATE invoices SET livemode = false WHERE id = ${id}`)
  const options = created.body.paymentOptions as Array<{ railType: string; destinationAddress: string; optionPayload: { contractAddress?: string } | null }>
  return {
    id,
    depositAddress: getAddress(options.find((option) => option.railType === "address_transfer")!.destinationAddress),
    forwarderAddress: getAddress(options.find((option) => option.railType === "wallet_contract")!.optionPayload!.contractAddress!)
  }
}

const stateOf = async (id: string) => {
  const rows = await sql((sql) =>
    sql<{ status: string; payments: string; unmatched: string }>`SELECT i.status, (SELECT count(*) FROM payments p WHERE p.invoice_id = i.id)::text AS payments,
      (SELECT count(*) FROM unmatched_deposits d WHERE d.invoice_id = i.id)::text AS unmatched
      FROM invoices i WHERE i.id = ${id}`
  )
  return { status: rows[0]!.status, payments: Number(rows[0]!.payments), unmatched: Number(rows[0]!.unmatched) }
}

beforeAll(async () => {
  live = await startAnvil({ chainId: 1 })
  await live.installToken(USDC)
  payer = live.accounts[1]
  await live.mint(USDC, payer, usdc(1_000))
  app = await startChainApp({}, {
    CHECKOUT_RPC_URL_ETHEREUM: live.rpcUrl,
    CHECKOUT_TOKEN_ETHEREUM_USDC: USDC,
    CHECKOUT_CONFIRMATIONS_ETHEREUM: "2"
  })
  await pollWatcherToHead(app, "ethereum")
}, 120_000)

afterAll(async () => {
  await app?.close()
  await live?.stop()
})

describe("test mode and the live chain watchers", () => {
  it("a real transfer on the live chain to a test invoice's deposit or forwarder address is not credited; the live invoice beside it is", async () => {
    const merchant = await newMerchant()
    const test = await createInvoice(merchant, 5, "test")
    const real = await createInvoice(merchant, 5, "live")

    await live.transfer(USDC, payer, test.depositAddress, usdc(5))
    await live.transfer(USDC, payer, test.forwarderAddress, usdc(5))
    await live.transfer(USDC, payer, real.depositAddress, usdc(5))
    await live.mine(3)
    await pollWatcherToHead(app, "ethereum")

    expect(await stateOf(real.id)).toEqual({ status: "confirmed", payments: 1, unmatched: 0 })
    expect(await stateOf(test.id)).toEqual({ status: "awaiting_payment", payments: 0, unmatched: 0 })
  })
})
