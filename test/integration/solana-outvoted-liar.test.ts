import { type Keypair, Keypair as Keys, PublicKey } from "@solana/web3.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fundedSolanaWallet, pollWatcher, sendPrepared, sendSolanaTransfer, solanaUsdcMethod, startChainApp, startSolanaWithMints } from "../support/ChainSuites.ts"
import { refundOf, requestRefund } from "../support/RefundRequests.ts"
import { type RpcFront, startRpcFront } from "../support/RpcFront.ts"
import type { SolanaNode } from "../support/SolanaRpc.ts"
import { publicRequest, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import { optionOn, payloadField } from "../support/Answers.ts"
import { endpointReport, watcherStatus } from "../support/WatcherStatus.ts"

// Issue #52 item 1 on Solana: the reverse liar (leaves a real payment's signature out of
// getSignaturesForAddress and answers its getTransaction with null) is outvoted once a third
// endpoint answers: the honest payment is credited, the liar is marked `disagreeing`, and the honest
// endpoint is never quarantined by its one voice. Three endpoints in front of one litesvm node:
// a (preferred), b, c; a fresh app per test, so that a quarantine does not carry over. And item 4
// for refunds: a refund's transfer no other endpoint can corroborate is `sent`, never `completed`.
const USDC = Keys.generate().publicKey

let node: SolanaNode
let a: RpcFront
let b: RpcFront
let c: RpcFront
let app: TestApp | undefined
let merchant: TestMerchant

const poll = () => pollWatcher(app!, "solana")
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const watcher = () => watcherStatus(merchant, "solana")
const endpoint = async (front: RpcFront) => endpointReport(await watcher(), front.url)
const statusOf = async (id: string) => (await merchant.api(`/api/checkout/invoices/${id}`)).body.status

const startApp = async () => {
  await app?.close()
  for (const front of [a, b, c]) {
    front.mode = "pass"
    front.hideSignatures.length = 0
  }
  app = await startChainApp({}, {
    CHECKOUT_RPC_URL_SOLANA: `${a.url}, ${b.url}, ${c.url}`,
    CHECKOUT_RPC_TIMEOUT_MS: "1000",
    CHECKOUT_TOKEN_SOLANA_USDC: USDC.toBase58()
  })
  merchant = await app.createMerchant({ methods: [solanaUsdcMethod()] })
  await poll()
}

/** A real payment whose signature `liar` leaves out of its lists and whose transaction it denies. */
const paidBehind = async (liar: RpcFront) => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 5 } })
  expect(created.status).toBe(201)
  const option = optionOn(created.body, "solana")
  const payer: Keypair = fundedSolanaWallet(node, [USDC], 1_000_000_000n)
  const prepared = await publicRequest(app!.baseUrl, `/api/checkout/pay/${created.body.id}/prepare-solana-wallet-payment`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ paymentOptionId: option.id, payerPublicKey: payer.publicKey.toBase58() })
  })
  expect(prepared.status).toBe(200)
  liar.hideSignatures.push(await sendPrepared(node, prepared.body.transaction, payer))
  return created.body.id as string
}

/** Polls (`slots` further each time) until `done`: an endpoint back from errors may back off for seconds. */
const pollUntil = async (done: () => Promise<boolean>, slots = 4, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error("the condition was not reached")
    await sleep(300)
    node.advance(slots)
    await poll()
  }
}

const neverQuarantined = async (honest: RpcFront) => {
  const state = await endpoint(honest)
  expect(state.state).not.toBe("disagreeing")
  expect(state.refusedTransfers ?? 0).toBe(0)
}

beforeAll(async () => {
  node = await startSolanaWithMints(USDC)
  ;[a, b, c] = await Promise.all([0, 1, 2].map(() => startRpcFront(node.url, "jsonrpc")))
}, 120_000)

afterAll(async () => {
  await app?.close()
  await Promise.all([a, b, c].map((front) => front?.close()))
  await node?.close()
})

describe("a Solana reverse liar outvoted by a third endpoint", () => {
  it("as the second endpoint: disputed while the third is down, credited when it answers, the liar marked and the honest one never quarantined", async () => {
    await startApp()
    c.mode = "error"
    const invoice = await paidBehind(b)
    for (let round = 0; round < 3; round++) {
      node.advance(5)
      await poll()
    }
    expect(await statusOf(invoice)).toBe("payment_detected")
    expect((await watcher()).awaitingCorroboration).toMatchObject({ payments: 1, disputed: 1 })
    await neverQuarantined(a)
    expect((await endpoint(b)).refusedTransfers ?? 0).toBe(0)

    c.mode = "pass"
    await pollUntil(async () => (await statusOf(invoice)) === "confirmed")
    expect(await endpoint(b)).toMatchObject({ state: "disagreeing", refusedTransfers: 1 })
    await neverQuarantined(a)
    await neverQuarantined(c)
    expect((await watcher()).awaitingCorroboration).toMatchObject({ payments: 0, disputed: 0 })
    expect(await (await fetch(`${app!.baseUrl}/metrics`)).text()).toContain(
      `checkout_chain_endpoint_refused_transfers_total{network="solana",endpoint="${b.url}"} 1`
    )
  })

  it("as the first endpoint: found by the re-read at depth, disputed, credited when the third answers, the liar marked and the honest one never quarantined", async () => {
    await startApp()
    c.mode = "error"
    const invoice = await paidBehind(a)
    await poll()
    expect(await statusOf(invoice)).toBe("awaiting_payment")
    await pollUntil(async () => (await statusOf(invoice)) === "payment_detected", 10)
    expect((await watcher()).awaitingCorroboration).toMatchObject({ payments: 1, disputed: 1 })
    await neverQuarantined(b)

    c.mode = "pass"
    await pollUntil(async () => (await statusOf(invoice)) === "confirmed")
    expect(await endpoint(a)).toMatchObject({ state: "disagreeing", refusedTransfers: 1 })
    await neverQuarantined(b)
    await neverQuarantined(c)
  })
})

describe("a Solana refund's transfer no other endpoint can corroborate yet", () => {
  it("is sent while the second and third endpoints are down, never completed; completed once they are back", async () => {
    await startApp()
    // An invoice of $10 paid $15 and confirmed while all answer: $5 of USDC to refund.
    const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 10 } })
    const invoiceId = created.body.id as string
    const option = optionOn(created.body, "solana")
    const wallet = fundedSolanaWallet(node, [USDC], 1_000_000_000n)
    const pay = (recipient: PublicKey, amountAtomic: bigint, reference: PublicKey) =>
      sendSolanaTransfer(node, wallet, { recipient, mint: USDC, amountAtomic, reference, memo: "Refund" })
    pay(new PublicKey(payloadField(option, "recipientAddress")), 15_000_000n, new PublicKey(payloadField(option, "reference")))
    await pollUntil(async () => (await statusOf(invoiceId)) === "confirmed", 10)
    const refundee = Keys.generate().publicKey
    const { amountAtomic } = await requestRefund(app!.baseUrl, invoiceId, refundee.toBase58())
    const requests = await merchant.dashboard(`/api/dashboard/invoices/${invoiceId}/refunds`)
    const reference = new PublicKey(requests.body.data[0].paymentRequest.reference)

    b.mode = "error"
    c.mode = "error"
    const signature = pay(refundee, amountAtomic, reference)
    await poll()
    expect(await refundOf(app!.baseUrl, invoiceId)).toMatchObject({ status: "sent", transactionHash: signature, completedAt: null })
    // Deeper than its required confirmations: still sent while no other endpoint can corroborate it.
    for (let round = 0; round < 3; round++) {
      node.advance(20)
      await poll()
    }
    expect(await refundOf(app!.baseUrl, invoiceId)).toMatchObject({ status: "sent", completedAt: null })
    expect((await watcher()).awaitingCorroboration?.payments).toBeGreaterThanOrEqual(1)

    b.mode = "pass"
    c.mode = "pass"
    await pollUntil(async () => (await refundOf(app!.baseUrl, invoiceId)).status === "completed", 10)
    expect(await refundOf(app!.baseUrl, invoiceId)).toMatchObject({ transactionHash: signature })
    for (const front of [a, b, c]) expect((await endpoint(front)).refusedTransfers ?? 0).toBe(0)
  })
})
