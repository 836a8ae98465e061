import { ASSOCIATED_TOKEN_PROGRAM_ID, decodeTransferCheckedInstruction, getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID } from "@solana/spl-token"
import { Keypair, PublicKey, Transaction } from "@solana/web3.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MEMO_PROGRAM_ID } from "../../src/chains/solana/SolanaTransfer.ts"
import { solanaUsdcMethod, startChainApp, startSolanaWithMints } from "../support/ChainSuites.ts"
import type { SolanaNode } from "../support/SolanaRpc.ts"
import { publicRequest, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import type { OptionJson } from "../support/Answers.ts"

const USDC = Keypair.generate().publicKey

let node: SolanaNode
let app: TestApp
let merchant: TestMerchant

beforeAll(async () => {
  node = await startSolanaWithMints(USDC)
  app = await startChainApp({ refundRequestRateLimitPerMinute: 1_000_000 }, {
    CHECKOUT_RPC_URL_SOLANA: node.url,
    CHECKOUT_RPC_TIMEOUT_MS: "1000",
    CHECKOUT_TOKEN_SOLANA_USDC: USDC.toBase58()
  })
  merchant = await app.createMerchant({
    methods: [solanaUsdcMethod()]
  })
}, 120_000)

afterAll(async () => {
  await app?.close()
  await node?.close()
})

/** A refund of 1 USDC: a 3 USD invoice paid 4 on Solana, confirmed. */
const solanaRefund = async (payer: PublicKey) => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 3 } })
  const option = created.body.paymentOptions.find((candidate: OptionJson) => candidate.network === "solana")
  const paid = await merchant.dashboard(`/api/dev/invoices/${created.body.id}/simulate-payment`, {
    body: { paymentOptionId: option.id, amount: "4", confirmations: 1_000, transactionHash: Keypair.generate().publicKey.toBase58() }
  })
  expect(paid.status).toBe(200)
  const requested = await publicRequest(app.baseUrl, `/api/checkout/pay/${created.body.id}/refunds`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ paymentOptionId: option.id, refundAddress: payer.toBase58() })
  })
  expect(requested.status).toBe(201)
  const [refund] = (await merchant.dashboard(`/api/dashboard/invoices/${created.body.id}/refunds`)).body.data
  return { invoiceId: created.body.id as string, refund }
}

const prepare = (refundId: string, payerPublicKey: string) => merchant.dashboard(`/api/dashboard/refunds/${refundId}/prepare-solana-transaction`, { body: { payerPublicKey } })

describe("POST /api/dashboard/refunds/:id/prepare-solana-transaction", () => {
  it("answers an unsigned transfer of the refund from the merchant's wallet to the payer's, carrying the refund's reference", async () => {
    const payer = Keypair.generate().publicKey
    const { invoiceId, refund } = await solanaRefund(payer)
    expect(refund).toMatchObject({ network: "solana", amountAtomic: "1000000", tokenContract: USDC.toBase58(), refundAddress: payer.toBase58() })
    expect(refund.reference).toEqual(expect.any(String))
    expect(refund.paymentRequest.uri).toBe(
      `solana:${payer.toBase58()}?amount=1&spl-token=${USDC.toBase58()}&reference=${refund.reference}&label=Refund&memo=Refund%20${invoiceId}`
    )

    const wallet = Keypair.generate().publicKey
    const answer = await prepare(refund.id, wallet.toBase58())
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({ refundId: refund.id, amountAtomic: "1000000", blockhash: node.svm.latestBlockhash() })
    const transaction = Transaction.from(Buffer.from(answer.body.transaction, "base64"))
    expect(transaction.feePayer?.equals(wallet)).toBe(true)
    expect(transaction.signatures.map((entry) => [entry.publicKey.toBase58(), entry.signature])).toEqual([[wallet.toBase58(), null]])
    const [create, memo, transfer] = transaction.instructions
    const payerAccount = getAssociatedTokenAddressSync(USDC, payer)
    expect(create.programId.equals(ASSOCIATED_TOKEN_PROGRAM_ID)).toBe(true)
    expect(create.keys[1].pubkey.equals(payerAccount)).toBe(true)
    expect(memo.programId.equals(MEMO_PROGRAM_ID)).toBe(true)
    expect(memo.data.toString("utf8")).toBe(`Refund ${invoiceId}`)
    expect(transfer.programId.equals(TOKEN_PROGRAM_ID)).toBe(true)
    const decoded = decodeTransferCheckedInstruction(transfer)
    expect(decoded.data).toMatchObject({ amount: 1_000_000n, decimals: 6 })
    expect(decoded.keys.source.pubkey.equals(getAssociatedTokenAddressSync(USDC, wallet))).toBe(true)
    expect(decoded.keys.destination.pubkey.equals(payerAccount)).toBe(true)
    expect(transfer.keys.at(-1)).toEqual({ pubkey: new PublicKey(refund.reference), isSigner: false, isWritable: false })
  })

  it("refuses a key that cannot sign, and a refund that is no longer requested", async () => {
    const payer = Keypair.generate().publicKey
    const { refund } = await solanaRefund(payer)
    const offCurve = getAssociatedTokenAddressSync(USDC, payer).toBase58()
    expect(await prepare(refund.id, offCurve)).toMatchObject({
      status: 400,
      body: { error: "payerPublicKey must be a base58 Solana public key (32 bytes on the ed25519 curve)" }
    })
    expect(await merchant.dashboard(`/api/dashboard/refunds/${refund.id}/reject`, { body: { note: "Paid by bank transfer" } })).toMatchObject({ status: 200 })
    expect(await prepare(refund.id, Keypair.generate().publicKey.toBase58())).toMatchObject({
      status: 409,
      body: { error: "Only a requested refund can be prepared; this refund is rejected" }
    })
  })
})
