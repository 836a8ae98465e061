import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { type Address, getAddress } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AnvilNode, startAnvil, TEST_TOKENS } from "../support/Anvil.ts"
import { ethereumUsdcMethod, pollWatcherToHead, startChainApp } from "../support/ChainSuites.ts"
import { refundOf, refundsOf, requestRefund } from "../support/RefundRequests.ts"
import { publicRequest, type TestApp, type TestMerchant } from "../support/TestApp.ts"

// The EVM watcher sees refund transactions (issue #40): a transfer of exactly the refund's amount
// of its token to the refund address, from any account, sends the refund; the required
// confirmations complete it; a reorganisation that drops it puts the refund back to requested.

const { USDC, USDT } = TEST_TOKENS
const REQUIRED = 3

let node: AnvilNode
let app: TestApp
let merchant: TestMerchant
let payer: Address
let merchantWallet: Address
let bystander: Address

const pollToHead = () => pollWatcherToHead(app, "ethereum")
const sql = <A>(run: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => app.run(Effect.flatMap(SqlClient.SqlClient, run))
const usdc = (amount: number) => BigInt(amount) * 1_000_000n

/** An invoice of $10 paid $15 and confirmed: $5 of USDC to refund. */
const overpaidInvoice = async () => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 10 } })
  expect(created.status).toBe(201)
  const id = created.body.id as string
  await node.transfer(USDC, payer, getAddress(created.body.paymentOptions[0].destinationAddress), usdc(15))
  await node.mine(REQUIRED)
  await pollToHead()
  expect((await merchant.api(`/api/checkout/invoices/${id}`)).body.status).toBe("confirmed")
  return id
}

/** A fresh address of nobody's: the payer's refund address. */
const freshAddress = () => getAddress(`0x${Buffer.from(crypto.getRandomValues(new Uint8Array(20))).toString("hex")}`)

beforeAll(async () => {
  node = await startAnvil({ chainId: 1 })
  await node.installToken(USDC)
  await node.installToken(USDT)
  payer = node.accounts[1]
  merchantWallet = node.accounts[2]
  bystander = node.accounts[3]
  for (const account of [payer, merchantWallet, bystander]) {
    await node.mint(USDC, account, usdc(1_000_000))
    await node.mint(USDT, account, usdc(1_000_000))
  }
  app = await startChainApp({}, {
    CHECKOUT_RPC_URL_ETHEREUM: node.rpcUrl,
    CHECKOUT_TOKEN_ETHEREUM_USDC: USDC,
    CHECKOUT_TOKEN_ETHEREUM_USDT: USDT,
    CHECKOUT_CONFIRMATIONS_ETHEREUM: String(REQUIRED)
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

describe("the EVM watcher and refunds", () => {
  it("ignores a wrong amount, a wrong token and another recipient; the exact transfer sends the refund and its confirmations complete it", async () => {
    const invoiceId = await overpaidInvoice()
    const refundAddress = freshAddress()
    // All lower-case, as a payer may type it: the watcher matches addresses in any letter case.
    const { amountAtomic } = await requestRefund(app.baseUrl, invoiceId, refundAddress.toLowerCase())
    expect(amountAtomic).toBe(usdc(5))

    await node.transfer(USDC, bystander, refundAddress, amountAtomic - 1n)
    await node.transfer(USDC, bystander, refundAddress, amountAtomic + 1n)
    await node.transfer(USDT, merchantWallet, refundAddress, amountAtomic)
    await node.transfer(USDC, merchantWallet, freshAddress(), amountAtomic)
    let report = await pollToHead()
    expect(report.refundsSeen).toBe(0)
    expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "requested", transactionHash: null })

    const paid = await node.transfer(USDC, merchantWallet, refundAddress, amountAtomic)
    report = await pollToHead()
    expect(report.refundsSeen).toBe(1)
    expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "sent", transactionHash: paid.hash.toLowerCase(), completedAt: null })

    // A second exact transfer is not counted: the first one pays the refund.
    await node.transfer(USDC, bystander, refundAddress, amountAtomic)
    await pollToHead()
    expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "sent", transactionHash: paid.hash.toLowerCase() })

    // The paying block has 2 confirmations now (the second transfer's block); one more completes it.
    await node.mine(1)
    await pollToHead()
    const completed = await refundOf(app.baseUrl, invoiceId)
    expect(completed).toMatchObject({ status: "completed", transactionHash: paid.hash.toLowerCase() })
    expect(completed.completedAt).not.toBeNull()
    expect((await refundsOf(app.baseUrl, invoiceId)).refundable).toEqual([])
  })

  it("two refunds of the same amount to the same address: each transfer pays one of them", async () => {
    const [first, second] = [await overpaidInvoice(), await overpaidInvoice()]
    const refundAddress = freshAddress()
    const { amountAtomic } = await requestRefund(app.baseUrl, first, refundAddress)
    expect((await requestRefund(app.baseUrl, second, refundAddress)).amountAtomic).toBe(amountAtomic)

    const one = await node.transfer(USDC, merchantWallet, refundAddress, amountAtomic)
    await pollToHead()
    const sent = [await refundOf(app.baseUrl, first), await refundOf(app.baseUrl, second)]
    expect(sent.map((refund) => refund.status).sort()).toEqual(["requested", "sent"])
    expect(sent.find((refund) => refund.status === "sent")?.transactionHash).toBe(one.hash.toLowerCase())

    // The next transfer, in a later poll, pays the other one.
    const other = await node.transfer(USDC, merchantWallet, refundAddress, amountAtomic)
    await pollToHead()
    const both = [await refundOf(app.baseUrl, first), await refundOf(app.baseUrl, second)]
    expect(both.map((refund) => refund.status)).toEqual(["sent", "sent"])
    expect(both.map((refund) => refund.transactionHash).sort()).toEqual([one.hash.toLowerCase(), other.hash.toLowerCase()].sort())
    await node.mine(REQUIRED)
    await pollToHead()
    expect([(await refundOf(app.baseUrl, first)).status, (await refundOf(app.baseUrl, second)).status]).toEqual(["completed", "completed"])
  })

  it("a reorganisation that drops the refund transaction puts the refund back to requested; mined again, it completes once", async () => {
    const invoiceId = await overpaidInvoice()
    const refundAddress = freshAddress()
    const { amountAtomic } = await requestRefund(app.baseUrl, invoiceId, refundAddress)
    const paid = await node.transfer(USDC, merchantWallet, refundAddress, amountAtomic)
    await node.mine(REQUIRED - 1)
    await pollToHead()
    expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "completed", transactionHash: paid.hash.toLowerCase() })

    // The paying block and the two above it are replaced by empty blocks: the transaction is gone.
    await node.reorg(REQUIRED)
    expect(await node.publicClient.getTransactionReceipt({ hash: paid.hash }).catch(() => null)).toBeNull()
    let report = await pollToHead()
    expect(report.refundsReverted).toBe(1)
    expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "requested", transactionHash: null, completedAt: null })
    // Nothing is refundable twice while it waits: the request still holds the amount.
    expect((await refundsOf(app.baseUrl, invoiceId)).refundable).toEqual([])

    // The same transaction mined again in a new last block: sent, then completed, with one transaction.
    await node.reorg(1, [paid.hash])
    const receipt = await node.publicClient.getTransactionReceipt({ hash: paid.hash })
    report = await pollToHead()
    expect(report.refundsSeen).toBe(1)
    expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "sent", transactionHash: paid.hash.toLowerCase() })
    await node.mine(REQUIRED - 1)
    await pollToHead()
    expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "completed", transactionHash: paid.hash.toLowerCase() })
    expect(receipt.blockNumber).toBeGreaterThan(paid.blockNumber)
    expect((await refundsOf(app.baseUrl, invoiceId)).refunds).toHaveLength(1)
  })

  it("checks the block of a sent refund against the chain: one that is no longer the chain's block at its height is rewound and read again", async () => {
    const invoiceId = await overpaidInvoice()
    const refundAddress = freshAddress()
    const { refund, amountAtomic } = await requestRefund(app.baseUrl, invoiceId, refundAddress)
    const paid = await node.transfer(USDC, merchantWallet, refundAddress, amountAtomic)
    await pollToHead()
    expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "sent", transactionHash: paid.hash.toLowerCase() })

    // As if it had been read from a branch the node has since replaced below an unchanged cursor.
    await sql((sql) => sql`UPDATE refunds SET block_hash = ${"0x" + "ab".repeat(32)} WHERE id = ${refund.id}`)
    const report = await pollToHead()
    expect(report.refundsReverted).toBe(1)
    expect(report.refundsSeen).toBe(1)
    const rows = await sql((sql) => sql<{ status: string; blockHash: string }>`SELECT status, block_hash FROM refunds WHERE id = ${refund.id}`)
    expect(rows).toEqual([{ status: "sent", blockHash: paid.blockHash.toLowerCase() }])
  })
})

describe("refund addresses and the watcher (#44)", () => {
  const post = (invoiceId: string, paymentOptionId: string, refundAddress: string) =>
    publicRequest(app.baseUrl, `/api/checkout/pay/${invoiceId}/refunds`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ paymentOptionId, refundAddress })
    })

  it("refuses an address with code on the network; an address without code is checked and noted as such", async () => {
    const invoiceId = await overpaidInvoice()
    const { refundable } = await refundsOf(app.baseUrl, invoiceId)
    const contract = freshAddress()
    await fetch(node.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_setCode", params: [contract, "0x6000"] })
    })
    expect(await post(invoiceId, refundable[0].paymentOptionId, contract)).toMatchObject({
      status: 400,
      body: { error: "refundAddress must not be a contract (it has code on the network)" }
    })
    const { refund } = await requestRefund(app.baseUrl, invoiceId, freshAddress())
    const [row] = await sql((sql) => sql<{ addressNote: string | null }>`SELECT address_note FROM refunds WHERE id = ${refund.id}`)
    expect(row.addressNote).toBeNull()
  })

  it("a transfer to a deposit address that pays a refund there sends the refund and is not also a payment", async () => {
    const invoiceId = await overpaidInvoice()
    const { refund, amountAtomic } = await requestRefund(app.baseUrl, invoiceId, freshAddress())
    // Recorded before addresses were checked (#44): a refund to the invoice's own deposit address.
    const invoice = (await merchant.api(`/api/checkout/invoices/${invoiceId}`)).body
    const deposit = getAddress(invoice.paymentOptions[0].destinationAddress)
    await sql((sql) => sql`UPDATE refunds SET refund_address = ${deposit}, watch_key = ${deposit.toLowerCase()} WHERE id = ${refund.id}`)
    const paymentsBefore = invoice.payments.length

    const paid = await node.transfer(USDC, merchantWallet, deposit, amountAtomic)
    const report = await pollToHead()
    expect(report.refundsSeen).toBe(1)
    expect(report.evidence).toBe(0)
    expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "sent", transactionHash: paid.hash.toLowerCase() })
    // Read again at the next confirmations: still not a payment.
    await node.mine(REQUIRED)
    await pollToHead()
    expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "completed" })
    const after = (await merchant.api(`/api/checkout/invoices/${invoiceId}`)).body
    expect(after.payments).toHaveLength(paymentsBefore)
    expect(after.receivedAmountUsd).toBe(invoice.receivedAmountUsd)
  })
})
