import { type Keypair, Keypair as Keys } from "@solana/web3.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fundedSolanaWallet, pollWatcher, sendPrepared, solanaUsdcMethod, startChainApp, startSolanaWithMints } from "../support/ChainSuites.ts"
import { type RpcFront, startRpcFront } from "../support/RpcFront.ts"
import type { SolanaNode } from "../support/SolanaRpc.ts"
import { publicRequest, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import { endpointReport, watcherStatus } from "../support/WatcherStatus.ts"
import type { JsonBody } from "../support/Json.ts"

// Issue #52 item 1 on Solana: the account cursor obeys the rule of the block cursor. Three endpoints
// in front of one litesvm node: a (preferred, honest), b and c, which hide real payments (left out
// of getSignaturesForAddress, getTransaction answered null). Their two denials outvote a on the
// first payment: a is quarantined, reads go to b, the re-read at depth to c, and the account
// cursor moves past the payments they hide. Once a's quarantine ends, the accounts are read again
// from a back to where its quarantine began, and the hidden payments are credited.
const USDC = Keys.generate().publicKey
const QUARANTINE_MS = 12_000

let node: SolanaNode
let a: RpcFront
let b: RpcFront
let c: RpcFront
let app: TestApp
let merchant: TestMerchant

const poll = () => pollWatcher(app, "solana")
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const endpoint = async (front: RpcFront) => endpointReport(await watcherStatus(merchant, "solana"), front.url)
const statusOf = async (id: string) => (await merchant.api(`/api/checkout/invoices/${id}`)).body.status

/** A real payment of a new invoice; its invoice and signature. */
const pay = async () => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 5 } })
  expect(created.status).toBe(201)
  const option = (created.body.paymentOptions as ReadonlyArray<JsonBody>).find((candidate) => candidate.network === "solana")
  const payer: Keypair = fundedSolanaWallet(node, [USDC], 1_000_000_000n)
  const prepared = await publicRequest(app.baseUrl, `/api/checkout/pay/${created.body.id}/prepare-solana-wallet-payment`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ paymentOptionId: option.id, payerPublicKey: payer.publicKey.toBase58() })
  })
  expect(prepared.status).toBe(200)
  return { id: created.body.id as string, signature: await sendPrepared(node, prepared.body.transaction, payer) }
}

/** A real payment that b and c hide. */
const paidBehindTwo = async () => {
  const paid = await pay()
  for (const front of [b, c]) front.hideSignatures.push(paid.signature)
  return paid.id
}

beforeAll(async () => {
  node = await startSolanaWithMints(USDC)
  ;[a, b, c] = await Promise.all([0, 1, 2].map(() => startRpcFront(node.url, "jsonrpc")))
  app = await startChainApp({}, {
    CHECKOUT_RPC_URL_SOLANA: `${a.url}, ${b.url}, ${c.url}`,
    CHECKOUT_RPC_TIMEOUT_MS: "1000",
    CHECKOUT_TOKEN_SOLANA_USDC: USDC.toBase58(),
    CHECKOUT_ENDPOINT_QUARANTINE_MS: String(QUARANTINE_MS)
  })
  merchant = await app.createMerchant({ methods: [solanaUsdcMethod()] })
  await poll()
}, 120_000)

afterAll(async () => {
  await app?.close()
  await Promise.all([a, b, c].map((front) => front?.close()))
  await node?.close()
})

describe("a Solana watcher: the accounts read while an endpoint was quarantined are read again from it when it returns", () => {
  it("credits the real payments the two endpoints read meanwhile left out (scan and re-read at depth), once the quarantined one is back", async () => {
    // b and c deny a real payment a reports: a is quarantined (disagreeing).
    const first = await paidBehindTwo()
    node.advance(2)
    await poll()
    expect(await endpoint(a)).toMatchObject({ state: "disagreeing", refusedTransfers: 1 })

    // While a is out: another hidden payment, then a visible one that moves the account's cursor
    // past both; the scan (b) and the re-read at depth (c) pass over them, far deeper than its depth.
    const second = await paidBehindTwo()
    const visible = await pay()
    for (let round = 0; round < 5; round++) {
      node.advance(20)
      await poll()
    }
    expect(await statusOf(visible.id)).toBe("confirmed")
    expect(await statusOf(first)).toBe("awaiting_payment")
    expect(await statusOf(second)).toBe("awaiting_payment")
    expect((await endpoint(a)).state).toBe("disagreeing")
    for (const front of [b, c]) front.hideSignatures.length = 0

    // The quarantine ends: the account is read from a, the payments corroborated by b and c, credited.
    const deadline = Date.now() + QUARANTINE_MS + 60_000
    while ((await statusOf(first)) !== "confirmed" || (await statusOf(second)) !== "confirmed") {
      if (Date.now() > deadline) throw new Error("the hidden payments were not credited")
      await sleep(500)
      node.advance(4)
      await poll()
    }
    expect(await endpoint(a)).toMatchObject({ state: "healthy", refusedTransfers: 1 })
    for (const front of [b, c]) expect((await endpoint(front)).refusedTransfers ?? 0).toBe(0)
  }, 180_000)
})
