import { p2wpkh } from "@scure/btc-signer"
import { pubECDSA, randomPrivateKeyBytes } from "@scure/btc-signer/utils.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bitcoinMethod, pollWatcherToHead, startChainApp } from "../support/ChainSuites.ts"
import { type EsploraSimulator, startEsploraSimulator } from "../support/EsploraSimulator.ts"
import { refundOf, refundsOf, requestRefund } from "../support/RefundRequests.ts"
import type { TestApp, TestMerchant } from "../support/TestApp.ts"

// The bitcoin watcher sees refund transactions (issue #40): an output of exactly the refund's amount
// to the refund address, in any transaction, sends the refund once mined (the mempool is not read
// for refunds); the required confirmations complete it; a reorganisation that takes its block away
// puts the refund back to requested until it is mined again.

const REQUIRED = 3

let esplora: EsploraSimulator
let app: TestApp
let merchant: TestMerchant

const pollToHead = () => pollWatcherToHead(app, "bitcoin")

/** A mainnet P2WPKH address of a fresh key: the payer's refund address. */
const freshAddress = () => p2wpkh(pubECDSA(randomPrivateKeyBytes())).address!

/** An invoice of $25 paid one and a half times over and confirmed. */
const overpaidInvoice = async () => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 25 } })
  expect(created.status).toBe(201)
  const option = created.body.paymentOptions[0]
  const sats = BigInt(Math.round(option.quotedAmount * 1e8))
  esplora.pay([{ address: option.destinationAddress, sats: sats + sats / 2n }])
  esplora.mine(REQUIRED)
  await pollToHead()
  expect((await merchant.api(`/api/checkout/invoices/${created.body.id}`)).body.status).toBe("confirmed")
  return created.body.id as string
}

beforeAll(async () => {
  esplora = await startEsploraSimulator({ genesisTime: Math.floor(Date.now() / 1000) - 600, blockSeconds: 1 })
  app = await startChainApp({}, {
    CHECKOUT_ESPLORA_URL: esplora.url,
    CHECKOUT_RPC_TIMEOUT_MS: "1000",
    CHECKOUT_CONFIRMATIONS_BITCOIN: String(REQUIRED)
  })
  merchant = await app.createMerchant({
    methods: [bitcoinMethod()]
  })
  await pollToHead()
}, 120_000)

afterAll(async () => {
  await app?.close()
  await esplora?.close()
})

describe("the bitcoin watcher and refunds", () => {
  it("ignores other amounts and addresses; the exact output sends the refund once mined, and its confirmations complete it", async () => {
    const invoiceId = await overpaidInvoice()
    const refundAddress = freshAddress()
    const { amountAtomic } = await requestRefund(app.baseUrl, invoiceId, refundAddress)
    expect(amountAtomic).toBeGreaterThan(0n)

    esplora.pay([{ address: refundAddress, sats: amountAtomic - 1n }])
    esplora.pay([{ address: refundAddress, sats: amountAtomic + 1n }])
    esplora.pay([{ address: freshAddress(), sats: amountAtomic }])
    esplora.mine(1)
    let report = await pollToHead()
    expect(report.refundsSeen).toBe(0)
    expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "requested", transactionHash: null })

    // In the mempool it is not yet a refund sent.
    const txid = esplora.pay([{ address: freshAddress(), sats: 10_000n }, { address: refundAddress, sats: amountAtomic }])
    await pollToHead()
    expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "requested" })

    esplora.mine(1)
    report = await pollToHead()
    expect(report.refundsSeen).toBe(1)
    expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "sent", transactionHash: txid })

    esplora.mine(REQUIRED - 2)
    await pollToHead()
    expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "sent" })
    esplora.mine(1)
    await pollToHead()
    const completed = await refundOf(app.baseUrl, invoiceId)
    expect(completed).toMatchObject({ status: "completed", transactionHash: txid })
    expect(completed.completedAt).not.toBeNull()
    expect((await refundsOf(app.baseUrl, invoiceId)).refundable).toEqual([])
  })

  it("a reorganisation that puts the refund transaction back in the mempool makes it requested again; mined again, it completes once", async () => {
    const invoiceId = await overpaidInvoice()
    const refundAddress = freshAddress()
    const { amountAtomic } = await requestRefund(app.baseUrl, invoiceId, refundAddress)
    const txid = esplora.pay([{ address: refundAddress, sats: amountAtomic }])
    esplora.mine(1)
    await pollToHead()
    expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "sent", transactionHash: txid })

    esplora.reorg(1, "mempool")
    let report = await pollToHead()
    expect(report.refundsReverted).toBe(1)
    expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "requested", transactionHash: null })

    esplora.mine(1)
    report = await pollToHead()
    expect(report.refundsSeen).toBe(1)
    expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "sent", transactionHash: txid })
    esplora.mine(REQUIRED - 1)
    await pollToHead()
    expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "completed", transactionHash: txid })
    expect((await refundsOf(app.baseUrl, invoiceId)).refunds).toHaveLength(1)
  })
})
