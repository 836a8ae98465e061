import { Keypair, PublicKey } from "@solana/web3.js"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fundedSolanaWallet, pollWatcher, sendPrepared, sendSolanaTransfer, solanaUsdcMethod, startChainApp, startSolanaWithMints } from "../support/ChainSuites.ts"
import { refundOf, refundsOf, requestRefund } from "../support/RefundRequests.ts"
import type { SolanaNode } from "../support/SolanaRpc.ts"
import type { TestApp, TestMerchant } from "../support/TestApp.ts"
import type { OptionJson } from "../support/Answers.ts"

// The Solana watcher sees refund transactions (issue #40): a successful transaction that carries
// the refund's reference and moves exactly its amount of its mint into the refund address's
// associated token account sends the refund; the required slots complete it; a transaction that
// leaves the chain puts the refund back to requested until another one pays it.

const USDC = Keypair.generate().publicKey
const USDT = Keypair.generate().publicKey
const REQUIRED = 8

let node: SolanaNode
let app: TestApp
let merchant: TestMerchant

const poll = () => pollWatcher(app, "solana")
const sql = <A>(run: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => app.run(Effect.flatMap(SqlClient.SqlClient, run))
const usd = (amount: number) => BigInt(Math.round(amount * 1_000_000))

/** A wallet with SOL for fees and plenty of USDC and USDT. */
const newWallet = () => fundedSolanaWallet(node, [USDC, USDT], usd(1_000))

/** A signed transfer as a wallet sends it: the recipient's token account created if missing, the reference as a read-only key. */
const send = (from: Keypair, to: PublicKey, amountAtomic: bigint, reference: PublicKey, mint = USDC) =>
  sendSolanaTransfer(node, from, { recipient: to, mint, amountAtomic, reference, memo: "Refund" })

/** Polls: the refund of the invoice is sent by `transactionHash`. */
const pollSent = async (invoiceId: string, transactionHash: string) => {
  const report = await poll()
  expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "sent", transactionHash })
  return report
}

/** The required slots pass: the refund of the invoice is completed by `transactionHash`. */
const pollCompleted = async (invoiceId: string, transactionHash: string) => {
  node.advance(REQUIRED)
  await poll()
  expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "completed", transactionHash })
}

/** An invoice of $10 paid $15 in USDC and confirmed: $5 of USDC to refund. */
const overpaidInvoice = async () => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 10 } })
  expect(created.status).toBe(201)
  const option = created.body.paymentOptions.find((candidate: OptionJson) => candidate.network === "solana")
  send(newWallet(), new PublicKey(option.optionPayload.recipientAddress), usd(15), new PublicKey(option.optionPayload.reference))
  await poll()
  node.advance(REQUIRED)
  await poll()
  expect((await merchant.api(`/api/checkout/invoices/${created.body.id}`)).body.status).toBe("confirmed")
  return created.body.id as string
}

/** The refund's reference, from the merchant's dashboard view of its payment request. */
const referenceOf = async (invoiceId: string) => {
  const answer = await merchant.dashboard(`/api/dashboard/invoices/${invoiceId}/refunds`)
  expect(answer.status).toBe(200)
  return new PublicKey(answer.body.data[0].paymentRequest.reference)
}

/** A refund of an overpaid invoice requested to a fresh address, and its reference. */
const requestedRefund = async () => {
  const invoiceId = await overpaidInvoice()
  const refundee = Keypair.generate().publicKey
  const { amountAtomic } = await requestRefund(app.baseUrl, invoiceId, refundee.toBase58())
  return { invoiceId, refundee, amountAtomic, reference: await referenceOf(invoiceId) }
}

beforeAll(async () => {
  node = await startSolanaWithMints(USDC, USDT)
  app = await startChainApp({}, {
    CHECKOUT_RPC_URL_SOLANA: node.url,
    CHECKOUT_RPC_TIMEOUT_MS: "1000",
    CHECKOUT_TOKEN_SOLANA_USDC: USDC.toBase58(),
    CHECKOUT_TOKEN_SOLANA_USDT: USDT.toBase58(),
    CHECKOUT_CONFIRMATIONS_SOLANA: String(REQUIRED)
  })
  merchant = await app.createMerchant({ methods: [solanaUsdcMethod()] })
  await poll()
}, 120_000)

afterAll(async () => {
  await app?.close()
  await node?.close()
})

describe("the Solana watcher and refunds", () => {
  it("ignores a wrong amount, a wrong mint and a missing reference; the exact transfer sends the refund and the slots complete it", async () => {
    const { invoiceId, refundee, amountAtomic, reference } = await requestedRefund()
    expect(amountAtomic).toBe(usd(5))
    const wallet = newWallet()

    send(wallet, refundee, amountAtomic - 1n, reference)
    send(wallet, refundee, amountAtomic + 1n, reference)
    send(wallet, refundee, amountAtomic, reference, USDT)
    send(wallet, refundee, amountAtomic, Keypair.generate().publicKey)
    send(wallet, Keypair.generate().publicKey, amountAtomic, reference)
    let report = await poll()
    expect(report.refundsSeen).toBe(0)
    expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "requested", transactionHash: null })

    const signature = send(wallet, refundee, amountAtomic, reference)
    report = await poll()
    expect(report.refundsSeen).toBe(1)
    expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "sent", transactionHash: signature, completedAt: null })

    // A second exact transfer is not counted: the first one pays the refund.
    send(newWallet(), refundee, amountAtomic, reference)
    await poll()
    expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "sent", transactionHash: signature })

    node.advance(REQUIRED)
    report = await poll()
    expect(report.confirmationsUpdated).toBeGreaterThanOrEqual(1)
    const completed = await refundOf(app.baseUrl, invoiceId)
    expect(completed).toMatchObject({ status: "completed", transactionHash: signature })
    expect(completed.completedAt).not.toBeNull()
    expect((await refundsOf(app.baseUrl, invoiceId)).refundable).toEqual([])
  })

  it("the transaction the dashboard prepares for the merchant's wallet, signed and sent, pays the refund", async () => {
    const invoiceId = await overpaidInvoice()
    const refundee = Keypair.generate().publicKey
    const { refund, amountAtomic } = await requestRefund(app.baseUrl, invoiceId, refundee.toBase58())
    const wallet = newWallet()
    const prepared = await merchant.dashboard(`/api/dashboard/refunds/${refund.id}/prepare-solana-transaction`, {
      body: { payerPublicKey: wallet.publicKey.toBase58() }
    })
    expect(prepared.status).toBe(200)
    const signature = await sendPrepared(node, prepared.body.transaction, wallet)
    // The refund address had no USDC account: the transaction created it with the amount.
    expect(node.tokenBalance(refundee, USDC)).toBe(amountAtomic)

    await pollSent(invoiceId, signature)
    await pollCompleted(invoiceId, signature)
  })

  it("a refund transaction that leaves the chain makes the refund requested again; another transfer completes it once", async () => {
    const { invoiceId, refundee, amountAtomic, reference } = await requestedRefund()
    const dropped = send(newWallet(), refundee, amountAtomic, reference)
    await pollSent(invoiceId, dropped)

    node.drop(dropped)
    let report = await poll()
    expect(report.refundsReverted).toBe(1)
    expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "requested", transactionHash: null })
    // It stays requested while nothing pays it.
    node.advance(REQUIRED)
    await poll()
    expect(await refundOf(app.baseUrl, invoiceId)).toMatchObject({ status: "requested" })

    const again = send(newWallet(), refundee, amountAtomic, reference)
    report = await pollSent(invoiceId, again)
    expect(report.refundsSeen).toBe(1)
    await pollCompleted(invoiceId, again)
    expect((await refundsOf(app.baseUrl, invoiceId)).refunds).toHaveLength(1)
  })

  it("a transfer that pays a refund in the same poll as its first transaction leaves the chain is the refund's transaction", async () => {
    const { invoiceId, refundee, amountAtomic, reference } = await requestedRefund()
    const dropped = send(newWallet(), refundee, amountAtomic, reference)
    await pollSent(invoiceId, dropped)

    node.drop(dropped)
    const again = send(newWallet(), refundee, amountAtomic, reference)
    await pollSent(invoiceId, again)
    await pollCompleted(invoiceId, again)
  })

  it("when the refund's transaction leaves the chain, a later transfer that paid it too becomes its transaction", async () => {
    const { invoiceId, refundee, amountAtomic, reference } = await requestedRefund()
    const dropped = send(newWallet(), refundee, amountAtomic, reference)
    await poll()
    const second = send(newWallet(), refundee, amountAtomic, reference)
    await pollSent(invoiceId, dropped)

    node.drop(dropped)
    const report = await pollSent(invoiceId, second)
    expect(report.refundsReverted).toBe(1)
    await pollCompleted(invoiceId, second)
  })

  it("a dropped refund transaction leaves alone another refund sent in a later slot", async () => {
    const first = await overpaidInvoice()
    const second = await overpaidInvoice()
    const refundees = [Keypair.generate().publicKey, Keypair.generate().publicKey]
    const amounts = [
      (await requestRefund(app.baseUrl, first, refundees[0].toBase58())).amountAtomic,
      (await requestRefund(app.baseUrl, second, refundees[1].toBase58())).amountAtomic
    ]
    const dropped = send(newWallet(), refundees[0], amounts[0], await referenceOf(first))
    const kept = send(newWallet(), refundees[1], amounts[1], await referenceOf(second))
    await pollSent(second, kept)

    node.drop(dropped)
    const report = await poll()
    expect(report.refundsReverted).toBe(1)
    expect(await refundOf(app.baseUrl, first)).toMatchObject({ status: "requested", transactionHash: null })
    expect(await refundOf(app.baseUrl, second)).toMatchObject({ status: "sent", transactionHash: kept })
    await pollCompleted(second, kept)
    expect(await refundOf(app.baseUrl, first)).toMatchObject({ status: "requested" })
  })
  it("a dropped refund transaction leaves completed a refund whose transaction is in a later slot", async () => {
    const first = await overpaidInvoice()
    const second = await overpaidInvoice()
    const refundees = [Keypair.generate().publicKey, Keypair.generate().publicKey]
    const requested = [
      await requestRefund(app.baseUrl, first, refundees[0].toBase58()),
      await requestRefund(app.baseUrl, second, refundees[1].toBase58())
    ]
    // The first refund needs more slots (as if the required confirmations were raised after it was
    // requested), so that it is still sent when the second, mined after it, completes.
    await sql((sql) => sql`UPDATE refunds SET required_confirmations = ${REQUIRED * 10} WHERE id = ${requested[0].refund.id}`)
    const dropped = send(newWallet(), refundees[0], requested[0].amountAtomic, await referenceOf(first))
    const kept = send(newWallet(), refundees[1], requested[1].amountAtomic, await referenceOf(second))
    await pollSent(first, dropped)
    await pollCompleted(second, kept)
    expect(await refundOf(app.baseUrl, first)).toMatchObject({ status: "sent", transactionHash: dropped })

    node.drop(dropped)
    const report = await poll()
    expect(report.refundsReverted).toBe(1)
    expect(await refundOf(app.baseUrl, first)).toMatchObject({ status: "requested", transactionHash: null })
    const completed = await refundOf(app.baseUrl, second)
    expect(completed).toMatchObject({ status: "completed", transactionHash: kept })
    expect(completed.completedAt).not.toBeNull()
    node.advance(REQUIRED)
    await poll()
    expect(await refundOf(app.baseUrl, second)).toMatchObject({ status: "completed", transactionHash: kept })
  })
})
