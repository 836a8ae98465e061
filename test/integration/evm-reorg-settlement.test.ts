import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { type Address, getAddress, type Hash } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AnvilNode, startAnvil, TEST_TOKENS } from "../support/Anvil.ts"
import { ethereumUsdcMethod, pollWatcher, pollWatcherToHead, startChainApp } from "../support/ChainSuites.ts"
import type { TestApp, TestMerchant } from "../support/TestApp.ts"

// Reorg honesty after confirmed, on a real node: a reorganisation that mines the same transaction
// again (in another block, behind another transaction) changes nothing; one that drops it for good
// opens a partial_payment exception, once the watcher has processed the required confirmations
// beyond the reorg point. One block per poll (CHECKOUT_EVM_MAX_LOG_RANGE=1), so the wait is visible.

const { USDC } = TEST_TOKENS
const ELSEWHERE: Address = "0x000000000000000000000000000000000000dEaD"
const REQUIRED = 3

let node: AnvilNode
let app: TestApp
let merchant: TestMerchant
let payer: Address
let bystander: Address

const poll = () => pollWatcher(app, "ethereum")
const pollToHead = () => pollWatcherToHead(app, "ethereum")
const sql = <A>(run: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => app.run(Effect.flatMap(SqlClient.SqlClient, run))

const usdc = (amount: number) => BigInt(amount) * 1_000_000n

const newInvoice = async (amountUsd: number) => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd } })
  expect(created.status).toBe(201)
  return { id: created.body.id as string, address: getAddress(created.body.paymentOptions[0].destinationAddress) }
}

const detail = async (id: string) => (await merchant.api(`/api/checkout/invoices/${id}`)).body

const outbox = (invoiceId: string) =>
  sql((sql) => sql<{ event: string }>`SELECT event FROM outbox WHERE invoice_id = ${invoiceId} ORDER BY id`).then((rows) => rows.map((row) => row.event))

const paymentRows = (invoiceId: string) =>
  sql((sql) =>
    sql<{ transactionHash: string; outputIndex: number; blockHeight: string | null; invalidatedAt: Date | null; confirmedAt: Date | null }>`
      SELECT transaction_hash, output_index, block_height::text AS block_height, invalidated_at, confirmed_at
      FROM payments WHERE invoice_id = ${invoiceId}`
  )

/** A confirmed invoice paid by one transfer mined at the returned height (its branch starts 3 blocks below). */
const confirmedInvoice = async (amountUsd: number) => {
  const invoice = await newInvoice(amountUsd)
  // Earlier transactions of the payer stay below the fork of the reorganisations of depth 4 below.
  await node.mine(3)
  await pollToHead()
  const payment = await node.transfer(USDC, payer, invoice.address, usdc(amountUsd))
  return { invoice, payment }
}

beforeAll(async () => {
  node = await startAnvil({ chainId: 1 })
  await node.installToken(USDC)
  payer = node.accounts[1]
  bystander = node.accounts[2]
  await node.mint(USDC, payer, usdc(1_000_000))
  await node.mint(USDC, bystander, usdc(1_000_000))
  app = await startChainApp({}, {
    CHECKOUT_RPC_URL_ETHEREUM: node.rpcUrl,
    CHECKOUT_TOKEN_ETHEREUM_USDC: USDC,
    CHECKOUT_CONFIRMATIONS_ETHEREUM: String(REQUIRED),
    CHECKOUT_EVM_MAX_LOG_RANGE: "1"
  })
  merchant = await app.createMerchant({
    methods: [ethereumUsdcMethod]
  })
  await pollToHead()
}, 120_000)

afterAll(async () => {
  await app?.close()
  await node?.stop()
})

describe("a reorganisation after confirmed", () => {
  it("that mines the same transaction again one block later, behind another one, is the same payment: no exception, no webhook", async () => {
    const { invoice, payment } = await confirmedInvoice(9)
    const other: Hash = (await node.transfer(USDC, bystander, ELSEWHERE, usdc(1))).hash
    await node.mine(1)
    await pollToHead()
    expect((await detail(invoice.id)).status).toBe("confirmed")
    const eventsBefore = await outbox(invoice.id)
    expect(eventsBefore).toContain("invoice_confirmed")

    // The 4 blocks from the payment's parent up are replaced; both transactions come back in the
    // branch's third block (one block after the payment's own), the other one first.
    await node.reorg(4, [{ hash: other, blockOffset: 2 }, { hash: payment.hash, blockOffset: 2 }])
    const receipt = await node.publicClient.getTransactionReceipt({ hash: payment.hash })
    expect(receipt.blockNumber).toBe(payment.blockNumber + 1n)
    expect(receipt.logs[0].logIndex).not.toBe(payment.logIndex)

    for (let polls = 0; polls < 10; polls++) {
      const report = await poll()
      expect((await detail(invoice.id)).exceptionStatus).toBeNull()
      if (report.processedHeight === report.headHeight) break
    }
    let body = await detail(invoice.id)
    expect(body).toMatchObject({ status: "confirmed", exceptionType: null, exceptionStatus: null, receivedAmountUsd: 9 })
    const rows = await paymentRows(invoice.id)
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ transactionHash: payment.hash.toLowerCase(), outputIndex: 0, blockHeight: String(receipt.blockNumber), invalidatedAt: null })

    // It confirms again where it now is; still nothing for the merchant to review.
    await node.mine(1)
    await pollToHead()
    body = await detail(invoice.id)
    expect(body).toMatchObject({ status: "confirmed", exceptionStatus: null })
    expect((await paymentRows(invoice.id))[0].confirmedAt).not.toBeNull()
    expect(await outbox(invoice.id)).toEqual(eventsBefore)
  })

  it("that drops the transaction for good opens one partial_payment exception, once the required confirmations beyond the reorg point are processed", async () => {
    const { invoice, payment } = await confirmedInvoice(6)
    await node.mine(REQUIRED - 1)
    await pollToHead()
    expect((await detail(invoice.id)).status).toBe("confirmed")
    const eventsBefore = await outbox(invoice.id)

    await node.reorg(4)
    // The chain is unchanged below the payment's block: the exception waits until that height plus the confirmations.
    const settlesAt = payment.blockNumber - 1n + BigInt(REQUIRED)
    let waited = 0
    for (let polls = 0; polls < 10; polls++) {
      const report = await poll()
      const body = await detail(invoice.id)
      expect(body.status).toBe("confirmed")
      if (report.processedHeight < settlesAt) {
        expect(body.exceptionStatus).toBeNull()
        expect(await outbox(invoice.id)).toEqual(eventsBefore)
        waited++
      } else {
        expect(body).toMatchObject({ exceptionType: "partial_payment", exceptionStatus: "open", receivedAmountUsd: 0 })
      }
      if (report.processedHeight === report.headHeight) break
    }
    expect(waited).toBeGreaterThan(0)
    expect((await paymentRows(invoice.id))[0]).toMatchObject({ transactionHash: payment.hash.toLowerCase() })
    expect((await paymentRows(invoice.id))[0].invalidatedAt).not.toBeNull()

    // Exactly once, however long the watcher goes on.
    await node.mine(2)
    await pollToHead()
    expect(await detail(invoice.id)).toMatchObject({ status: "confirmed", exceptionType: "partial_payment", exceptionStatus: "open" })
    expect(await outbox(invoice.id)).toEqual([...eventsBefore, "invoice_exception_opened"])
  })
})
