import { Keypair, PublicKey } from "@solana/web3.js"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildTransferTransaction } from "../../src/chains/solana/SolanaTransfer.ts"
import { fundedSolanaWallet, pollWatcher, sendPrepared, solanaUsdcMethod, startChainApp, startSolanaWithMints } from "../support/ChainSuites.ts"
import type { SolanaNode } from "../support/SolanaRpc.ts"
import { publicRequest, type TestApp } from "../support/TestApp.ts"
import { testKeyOf } from "../support/TestMode.ts"

// The Solana devnet watcher (issue #55 item 5): the litesvm RPC server stands in for devnet under
// CHECKOUT_TEST_RPC_URL_SOLANA, with a devnet USDC mint of its own; no live Solana watcher runs.
const DEVNET_USDC = Keypair.generate().publicKey

let devnet: SolanaNode
let app: TestApp

const sql = <A>(run: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => app.run(Effect.flatMap(SqlClient.SqlClient, run))

const prepare = (on: TestApp, invoiceId: string, paymentOptionId: string, payer: PublicKey) =>
  publicRequest(on.baseUrl, `/api/checkout/pay/${invoiceId}/prepare-solana-wallet-payment`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ paymentOptionId, payerPublicKey: payer.toBase58() })
  })

beforeAll(async () => {
  devnet = await startSolanaWithMints(DEVNET_USDC)
  app = await startChainApp({}, {
    CHECKOUT_TEST_RPC_URL_SOLANA: devnet.url,
    CHECKOUT_TEST_TOKEN_SOLANA_USDC: DEVNET_USDC.toBase58(),
    CHECKOUT_CONFIRMATIONS_SOLANA: "2"
  })
  await pollWatcher(app, "solana:test")
}, 120_000)

afterAll(async () => {
  await app?.close()
  await devnet?.close()
})

describe("the Solana devnet watcher", () => {
  it("confirms a test invoice paid with the devnet mint, under a cursor of its own", async () => {
    const merchant = await app.createMerchant({ methods: [solanaUsdcMethod()] })
    const { api } = await testKeyOf(app, merchant)
    const created = await api("/api/checkout/invoices", { body: { amountUsd: 4 } })
    expect(created.status).toBe(201)
    const option = created.body.paymentOptions.find((candidate: { network: string }) => candidate.network === "solana")
    expect(option.optionPayload.mintAddress).toBe(DEVNET_USDC.toBase58())
    const payer = fundedSolanaWallet(devnet, [DEVNET_USDC], 100_000_000n)
    const transaction = buildTransferTransaction({
      payer: payer.publicKey,
      recipient: new PublicKey(option.optionPayload.recipientAddress),
      mint: DEVNET_USDC,
      decimals: 6,
      amountAtomic: 4_000_000n,
      reference: new PublicKey(option.optionPayload.reference),
      memo: option.optionPayload.memo,
      blockhash: devnet.svm.latestBlockhash(),
      lastValidBlockHeight: devnet.slot() + 150
    })
    transaction.sign(payer)
    devnet.execute(transaction)
    devnet.advance(3)
    await pollWatcher(app, "solana:test")
    await pollWatcher(app, "solana:test")
    expect((await api(`/api/checkout/invoices/${created.body.id}`)).body).toMatchObject({ status: "confirmed", livemode: false })
    const rows = await sql((sql) => sql<{ network: string }>`SELECT network FROM chain_cursors ORDER BY network`)
    expect(rows.map((row) => row.network)).toEqual(["solana:test"])
    const accounts = await sql((sql) => sql<{ tokenAccount: string }>`SELECT token_account FROM solana_account_cursors`)
    expect(accounts.length).toBeGreaterThan(0)
    for (const { tokenAccount } of accounts) expect(tokenAccount).toMatch(/^test:/)
  })

  it("prepares a test invoice's wallet payment on devnet, with the devnet mint, though no live cluster is configured", async () => {
    const merchant = await app.createMerchant({ methods: [solanaUsdcMethod()] })
    const { api } = await testKeyOf(app, merchant)
    const created = await api("/api/checkout/invoices", { body: { amountUsd: 6 } })
    const option = created.body.paymentOptions.find((candidate: { network: string }) => candidate.network === "solana")
    const payer = fundedSolanaWallet(devnet, [DEVNET_USDC], 100_000_000n)
    const prepared = await prepare(app, created.body.id, option.id, payer.publicKey)
    expect(prepared.status).toBe(200)
    expect(prepared.body).toMatchObject({ blockhash: devnet.svm.latestBlockhash(), amountAtomic: "6000000" })
    await sendPrepared(devnet, prepared.body.transaction, payer)
    devnet.advance(3)
    await pollWatcher(app, "solana:test")
    await pollWatcher(app, "solana:test")
    expect((await api(`/api/checkout/invoices/${created.body.id}`)).body).toMatchObject({ status: "confirmed", livemode: false })
  })

  it("prepares a test invoice's refund on devnet, though no live cluster is configured", async () => {
    const merchant = await app.createMerchant({ methods: [solanaUsdcMethod()] })
    const { api } = await testKeyOf(app, merchant)
    const created = await api("/api/checkout/invoices", { body: { amountUsd: 3 } })
    const option = created.body.paymentOptions.find((candidate: { network: string }) => candidate.network === "solana")
    // Paid 4 USDC for 3 USD through the test helpers: 1 USDC to refund.
    const paid = await api(`/api/checkout/test-helpers/invoices/${created.body.id}/pay`, {
      body: { paymentOptionId: option.id, amount: "4", confirmations: 1_000, transactionHash: "test_refund_1" }
    })
    expect(paid.body.invoice).toMatchObject({ status: "confirmed", livemode: false })
    const payer = Keypair.generate().publicKey
    const requested = await publicRequest(app.baseUrl, `/api/checkout/pay/${created.body.id}/refunds`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ paymentOptionId: option.id, refundAddress: payer.toBase58() })
    })
    expect(requested.status).toBe(201)
    const [refund] = (await merchant.dashboard(`/api/dashboard/invoices/${created.body.id}/refunds`)).body.data
    const wallet = Keypair.generate().publicKey
    const answer = await merchant.dashboard(`/api/dashboard/refunds/${refund.id}/prepare-solana-transaction`, { body: { payerPublicKey: wallet.toBase58() } })
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({ refundId: refund.id, amountAtomic: "1000000", blockhash: devnet.svm.latestBlockhash() })
  })

  it("answers a test invoice's preparation as an unconfigured Solana does (503) when only the live cluster is configured", async () => {
    const liveOnly = await startChainApp({}, { CHECKOUT_RPC_URL_SOLANA: devnet.url })
    try {
      const merchant = await liveOnly.createMerchant({ methods: [solanaUsdcMethod()] })
      const { api } = await testKeyOf(liveOnly, merchant)
      const created = await api("/api/checkout/invoices", { body: { amountUsd: 6 } })
      const option = created.body.paymentOptions.find((candidate: { network: string }) => candidate.network === "solana")
      const prepared = await prepare(liveOnly, created.body.id, option.id, Keypair.generate().publicKey)
      expect(prepared).toMatchObject({ status: 503, body: { error: "Solana payment preparation is temporarily unavailable. Retry in a few seconds." } })
    } finally {
      await liveOnly.close()
    }
  })
})
