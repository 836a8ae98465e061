import { validateTransfer } from "@solana/pay"
import { createTransferCheckedInstruction, decodeTransferCheckedInstruction, getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID } from "@solana/spl-token"
import { Keypair, PublicKey, Transaction } from "@solana/web3.js"
import BigNumber from "bignumber.js"
import { Effect, Exit, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ChainWatchers } from "../../src/chains/ChainWatchers.ts"
import { buildTransferTransaction } from "../../src/chains/solana/SolanaTransfer.ts"
import { DEMO_KEYS } from "../../src/demo/DemoMerchant.ts"
import { verifyWebhookSignature } from "../../src/webhooks/Signature.ts"
import { fundedSolanaWallet, pollWatcher, sendPrepared, startChainApp, startSolanaWithMints } from "../support/ChainSuites.ts"
import type { SolanaNode } from "../support/SolanaRpc.ts"
import { publicRequest, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import { webhookHarness } from "../support/WebhookHarness.ts"
import { startWebhookReceiver, type WebhookReceiver } from "../support/WebhookReceiver.ts"
import type { JsonBody } from "../support/Json.ts"

// Test mints at the configured addresses stand in for USDC and USDT.
const USDC = Keypair.generate().publicKey
const USDT = Keypair.generate().publicKey
/** The default: 32 slots at `confirmed` is where `finalized` lies. */
const REQUIRED = 32

let node: SolanaNode
let app: TestApp
let receiver: WebhookReceiver

const poll = () => pollWatcher(app, "solana")
const sql = <A>(run: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => app.run(Effect.flatMap(SqlClient.SqlClient, run))
const usd = (amount: number) => BigInt(Math.round(amount * 1_000_000))

/** A merchant taking USDC and USDT on solana to a recipient of its own that has no token accounts yet. */
const newMerchant = async () => {
  const recipient = Keypair.generate().publicKey
  const merchant = await app.createMerchant({
    methods: [
      { network: "solana", assetCode: "USDC", railType: "address_transfer", enabled: true, isDefault: true, recipientAddress: recipient.toBase58(), xpub: null },
      { network: "solana", assetCode: "USDT", railType: "address_transfer", enabled: true, isDefault: false, recipientAddress: recipient.toBase58(), xpub: null },
      { network: "ethereum", assetCode: "USDC", railType: "address_transfer", enabled: true, isDefault: false, recipientAddress: null, xpub: DEMO_KEYS.evmXpub }
    ]
  })
  return { merchant, recipient }
}

const createInvoice = async (merchant: TestMerchant, amountUsd: number) => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd } })
  expect(created.status).toBe(201)
  const options = created.body.paymentOptions as ReadonlyArray<JsonBody>
  return {
    id: created.body.id as string,
    usdc: options.find((option) => option.network === "solana" && option.assetCode === "USDC"),
    usdt: options.find((option) => option.network === "solana" && option.assetCode === "USDT")
  }
}

const detail = async (merchant: TestMerchant, id: string) => (await merchant.api(`/api/checkout/invoices/${id}`)).body

const prepare = (invoiceId: string, body: unknown) =>
  publicRequest(app.baseUrl, `/api/checkout/pay/${invoiceId}/prepare-solana-wallet-payment`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })

/** A payer with SOL for fees and `tokens` of the mint in its associated token account. */
const newPayer = (tokens: bigint, mint = USDC) => fundedSolanaWallet(node, [mint], tokens)

/** What a wallet does: prepare, sign with the payer's key only, send through the RPC. */
const payThroughPreparation = async (invoiceId: string, optionId: string, payer: Keypair) => {
  const prepared = await prepare(invoiceId, { paymentOptionId: optionId, payerPublicKey: payer.publicKey.toBase58() })
  expect(prepared.status).toBe(200)
  const signature = await sendPrepared(node, prepared.body.transaction, payer)
  return { prepared: prepared.body, signature }
}

/** A transfer the test builds itself (another wallet, a wrong mint, a failing amount). */
const transfer = (payer: Keypair, option: JsonBody, amount: bigint, overrides: { mint?: PublicKey; recipient?: PublicKey } = {}) => {
  const { blockhash, lastValidBlockHeight } = { blockhash: node.svm.latestBlockhash(), lastValidBlockHeight: node.slot() + 150 }
  const transaction = buildTransferTransaction({
    payer: payer.publicKey,
    recipient: overrides.recipient ?? new PublicKey(option.optionPayload.recipientAddress),
    mint: overrides.mint ?? new PublicKey(option.optionPayload.mintAddress),
    decimals: 6,
    amountAtomic: amount,
    reference: new PublicKey(option.optionPayload.reference),
    memo: option.optionPayload.memo,
    blockhash,
    lastValidBlockHeight
  })
  transaction.sign(payer)
  return transaction
}

const transferAmountOf = (base64: string) => {
  const transaction = Transaction.from(Buffer.from(base64, "base64"))
  const instruction = transaction.instructions.find((candidate) => candidate.programId.equals(TOKEN_PROGRAM_ID))!
  return decodeTransferCheckedInstruction(instruction).data.amount
}

const cursorOf = async () => {
  const rows = await sql((sql) =>
    sql<{ processedHeight: string | null; lastError: string | null }>`
      SELECT processed_height::text AS processed_height, last_error FROM chain_cursors WHERE network = 'solana'`
  )
  return rows[0]
}

const waitFor = async (what: string, condition: () => Promise<boolean>, timeoutMs = 15_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

beforeAll(async () => {
  node = await startSolanaWithMints(USDC, USDT)
  app = await startChainApp({}, {
    CHECKOUT_RPC_URL_SOLANA: node.url,
    CHECKOUT_RPC_TIMEOUT_MS: "1000",
    CHECKOUT_TOKEN_SOLANA_USDC: USDC.toBase58(),
    CHECKOUT_TOKEN_SOLANA_USDT: USDT.toBase58(),
    CHECKOUT_CONFIRMATIONS_SOLANA: String(REQUIRED),
    CHECKOUT_POLL_INTERVAL_MS_SOLANA: "100"
  })
  receiver = await startWebhookReceiver()
  await poll()
}, 120_000)

afterAll(async () => {
  await app?.close()
  await receiver?.close()
  await node?.close()
})

describe("the Solana watcher and the wallet preparation", () => {
  it("prepares, the payer signs and sends, the watcher sees it, slots confirm it and a signed webhook follows", async () => {
    const harness = webhookHarness(app)
    const { merchant, recipient } = await newMerchant()
    const secret = await harness.configure(merchant, receiver.url("/solana-confirmed"))
    receiver.on("/solana-confirmed", (response) => response.writeHead(200).end())
    const invoice = await createInvoice(merchant, 12.5)
    const payer = newPayer(usd(1_000))
    // A first payment to this recipient: it has no USDC token account yet.
    expect(node.tokenBalance(recipient, USDC)).toBeUndefined()

    const { prepared, signature } = await payThroughPreparation(invoice.id, invoice.usdc.id, payer)
    expect(prepared).toMatchObject({ paymentOptionId: invoice.usdc.id, amountAtomic: "12500000" })
    expect(typeof prepared.blockhash).toBe("string")
    expect(prepared.lastValidBlockHeight).toBeGreaterThan(node.slot())
    expect(node.tokenBalance(recipient, USDC)).toBe(usd(12.5))

    const report = await poll()
    expect(report.evidence).toBe(1)
    const sent = await node.connection.getTransaction(signature, { maxSupportedTransactionVersion: 0 })
    let body = await detail(merchant, invoice.id)
    expect(body.status).toBe("payment_detected")
    expect(body.lastTransactionHash).toBe(signature)
    expect(body.confirmations).toBe(node.slot() - sent!.slot + 1)
    expect(body.payments[0]).toMatchObject({ network: "solana", amountReceived: 12.5, destinationAddress: recipient.toBase58(), confirmedAt: null })
    // Who paid (issue #52): the owner of the token account the payment came from.
    const payers = await sql((sql) => sql<{ payerAddress: string }>`SELECT payer_address FROM payments WHERE invoice_id = ${invoice.id}`)
    expect(payers.map((row) => row.payerAddress)).toEqual([payer.publicKey.toBase58()])
    // Chain time is the block time of the transaction's slot.
    expect(Date.parse(body.payments[0].observedAt)).toBe(node.blockTime(sent!.slot) * 1000)
    const memo = await sql((sql) => sql<{ memo: string; outcome: string }>`SELECT memo, outcome FROM solana_transfers WHERE signature = ${signature}`)
    expect(memo).toEqual([{ memo: invoice.usdc.optionPayload.memo, outcome: "evidence" }])

    // Solana Pay's own validation accepts it for the option's recipient, amount, reference and memo.
    await expect(validateTransfer(node.connection, signature, {
      recipient,
      amount: new BigNumber("12.5"),
      splToken: USDC,
      reference: new PublicKey(invoice.usdc.optionPayload.reference),
      memo: invoice.usdc.optionPayload.memo
    })).resolves.toBeTruthy()

    node.advance(REQUIRED - body.confirmations - 1)
    await poll()
    body = await detail(merchant, invoice.id)
    expect(body.status).toBe("payment_detected")
    expect(body.confirmations).toBe(REQUIRED - 1)

    node.advance(1)
    await poll()
    body = await detail(merchant, invoice.id)
    expect(body.status).toBe("confirmed")
    expect(body.confirmations).toBe(REQUIRED)

    await harness.runOnce()
    const confirmed = receiver.received("/solana-confirmed").find((request) => request.headers["x-checkout-event"] === "invoice_confirmed")
    expect(confirmed).toBeDefined()
    expect(verifyWebhookSignature(confirmed!.body, String(confirmed!.headers["x-checkout-signature"]), secret)).toBe(true)
    expect(JSON.parse(confirmed!.body).invoice).toMatchObject({ id: invoice.id, status: "confirmed", lastTransactionHash: signature })
  })

  it("after a partial payment, preparing again carries exactly what remains", async () => {
    const { merchant } = await newMerchant()
    const invoice = await createInvoice(merchant, 20)
    const payer = newPayer(usd(1_000))
    await node.connection.sendRawTransaction(transfer(payer, invoice.usdc, usd(8)).serialize())
    await poll()
    let body = await detail(merchant, invoice.id)
    expect(body.status).toBe("partially_paid")
    expect(body.receivedAmountUsd).toBe(8)

    const { prepared } = await payThroughPreparation(invoice.id, invoice.usdc.id, payer)
    expect(prepared.amountAtomic).toBe("12000000")
    expect(transferAmountOf(prepared.transaction)).toBe(usd(12))
    await poll()
    body = await detail(merchant, invoice.id)
    expect(body.status).toBe("payment_detected")
    expect(body.receivedAmountUsd).toBe(20)
    expect(body.paymentSummary.remainingAmountUsd).toBe(0)

    // Nothing remains: preparing again is refused.
    const again = await prepare(invoice.id, { paymentOptionId: invoice.usdc.id, payerPublicKey: payer.publicKey.toBase58() })
    expect(again.status).toBe(409)
    expect(again.body).toEqual({ error: "This invoice cannot be paid: it is payment_detected" })
  })

  it("does not count a failed transaction, and records a right reference with the wrong mint as an unmatched deposit", async () => {
    const { merchant, recipient } = await newMerchant()
    const invoice = await createInvoice(merchant, 5)
    // The merchant's USDT account is watched once one exists (its USDT options are open).
    node.setTokenBalance(recipient, USDT, 0n)
    const poor = newPayer(usd(1))
    const failing = transfer(poor, invoice.usdc, usd(5))
    const failed = await node.connection.sendRawTransaction(failing.serialize(), { skipPreflight: true })
    expect((await node.connection.getTransaction(failed, { maxSupportedTransactionVersion: 0 }))!.meta!.err).not.toBeNull()

    const usdtPayer = newPayer(usd(100), USDT)
    const wrongMint = await node.connection.sendRawTransaction(transfer(usdtPayer, invoice.usdc, usd(5), { mint: USDT }).serialize())
    const report = await poll()
    expect(report.evidence).toBe(0)
    expect(report.unmatched).toBe(1)
    const body = await detail(merchant, invoice.id)
    expect(body.status).toBe("awaiting_payment")
    expect(body.payments).toEqual([])
    const deposits = await merchant.dashboard(`/api/dashboard/unmatched-deposits`)
    expect(deposits.status).toBe(200)
    const listed = JSON.stringify(deposits.body)
    expect(listed).toContain(wrongMint)
    expect(listed).toContain("wrong_token")
    expect(listed).not.toContain(failed)
  })

  it("records the right reference paid to another watched recipient as an unmatched deposit", async () => {
    const first = await newMerchant()
    const second = await newMerchant()
    const invoice = await createInvoice(first.merchant, 4)
    const elsewhere = await createInvoice(second.merchant, 4)
    const payer = newPayer(usd(100))
    const sent = await node.connection.sendRawTransaction(transfer(payer, invoice.usdc, usd(4), { recipient: second.recipient }).serialize())
    const report = await poll()
    expect(report.unmatched).toBe(1)
    expect((await detail(first.merchant, invoice.id)).status).toBe("awaiting_payment")
    expect((await detail(second.merchant, elsewhere.id)).status).toBe("awaiting_payment")
    const deposits = await first.merchant.dashboard(`/api/dashboard/invoices/${invoice.id}/unmatched-deposits`)
    expect(JSON.stringify(deposits.body)).toContain(sent)
    expect(JSON.stringify(deposits.body)).toContain("wrong_recipient")
  })

  it("reads more than one page of an account's signatures in one poll", async () => {
    const { merchant, recipient } = await newMerchant()
    const invoice = await createInvoice(merchant, 6)
    const payer = newPayer(usd(100))
    const { signature } = await payThroughPreparation(invoice.id, invoice.usdc.id, payer)
    // 1,000 more transfers to the same token account, without a reference, before the watcher looks.
    const noise = newPayer(usd(1_000))
    const source = getAssociatedTokenAddressSync(USDC, noise.publicKey)
    const destination = getAssociatedTokenAddressSync(USDC, recipient)
    for (let index = 1; index <= 1_000; index++) {
      const transaction = new Transaction({ feePayer: noise.publicKey, blockhash: node.svm.latestBlockhash(), lastValidBlockHeight: node.slot() + 150 })
        .add(createTransferCheckedInstruction(source, USDC, destination, noise.publicKey, BigInt(index), 6))
      transaction.sign(noise)
      node.execute(transaction)
    }
    const pages = node.requests("getSignaturesForAddress")
    const report = await poll()
    expect(report.evidence).toBe(1)
    expect(node.requests("getSignaturesForAddress") - pages).toBeGreaterThanOrEqual(2)
    const body = await detail(merchant, invoice.id)
    // A thousand slots later it is already deeper than the required confirmations.
    expect(body.status).toBe("confirmed")
    expect(body.lastTransactionHash).toBe(signature)
    expect(body.receivedAmountUsd).toBe(6)
  }, 60_000)

  it("invalidates a payment whose transaction leaves the chain (a dropped fork)", async () => {
    const { merchant } = await newMerchant()
    const invoice = await createInvoice(merchant, 7)
    const payer = newPayer(usd(100))
    const { signature } = await payThroughPreparation(invoice.id, invoice.usdc.id, payer)
    await poll()
    expect((await detail(merchant, invoice.id)).status).toBe("payment_detected")

    node.drop(signature)
    const report = await poll()
    expect(report.invalidated).toBe(1)
    const body = await detail(merchant, invoice.id)
    expect(body.status).toBe("awaiting_payment")
    expect(body.receivedAmountUsd).toBe(0)
    expect(body.payments[0]).toMatchObject({ transactionHash: signature, invalidationReason: "chain_reorganization" })
    expect(body.payments[0].invalidatedAt).not.toBeNull()
  })

  it("keeps the API going while the RPC is down, answers 503 to preparation, and resumes without loss", async () => {
    const { merchant } = await newMerchant()
    const invoice = await createInvoice(merchant, 9)
    const payer = newPayer(usd(100))
    const workers = await Effect.runPromise(Scope.make())
    try {
      await app.run(Layer.buildWithScope(ChainWatchers.worker, workers))
      node.setMode("down")
      await waitFor("the solana watcher to record its failure", async () => (await cursorOf())?.lastError != null)
      // A payment lands while the service cannot read the chain.
      node.execute(transfer(payer, invoice.usdc, usd(9)))

      expect((await merchant.api(`/api/checkout/invoices/${invoice.id}/status`)).status).toBe(200)
      expect((await publicRequest(app.baseUrl, `/api/checkout/pay/${invoice.id}`)).status).toBe(200)
      const refused = await prepare(invoice.id, { paymentOptionId: invoice.usdc.id, payerPublicKey: payer.publicKey.toBase58() })
      expect(refused.status).toBe(503)
      expect(refused.body).toEqual({ error: "Solana payment preparation is temporarily unavailable. Retry in a few seconds." })

      node.setMode("hang")
      const started = Date.now()
      const slow = await prepare(invoice.id, { paymentOptionId: invoice.usdc.id, payerPublicKey: payer.publicKey.toBase58() })
      expect(slow.status).toBe(503)
      expect(Date.now() - started).toBeLessThan(5_000)

      node.setMode("up")
      await waitFor("the solana watcher to resume", async () => (await detail(merchant, invoice.id)).status === "payment_detected", 20_000)
      await waitFor("the error to clear", async () => (await cursorOf())?.lastError === null)
    } finally {
      await Effect.runPromise(Scope.close(workers, Exit.void))
    }
    const body = await detail(merchant, invoice.id)
    expect(body.receivedAmountUsd).toBe(9)
    expect(body.payments).toHaveLength(1)
  })
})
