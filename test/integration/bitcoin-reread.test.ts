import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pollWatcher, startChainApp } from "../support/ChainSuites.ts"
import { type EsploraSimulator, startEsploraSimulator } from "../support/EsploraSimulator.ts"
import { type RpcFront, startRpcFront } from "../support/RpcFront.ts"
import type { TestApp, TestMerchant } from "../support/TestApp.ts"
import { optionOn } from "../support/Answers.ts"
import { endpointReport, watcherStatus } from "../support/WatcherStatus.ts"

// Issue #52 items 1 and 2 on bitcoin, where a block is read through JSON pages (an API that serves
// no raw blocks: nothing proves the pages whole, unlike a raw block checked against its header's
// merkle root). Three Esplora endpoints in front of one simulator: a (preferred), b, c; a fresh app
// per test, so that a quarantine does not carry over.
// Long enough that the quarantine cannot end while the test still expects it, on a loaded machine.
const QUARANTINE_MS = 15_000

let esplora: EsploraSimulator
let a: RpcFront
let b: RpcFront
let c: RpcFront
let app: TestApp | undefined
let merchant: TestMerchant

const poll = () => pollWatcher(app!, "bitcoin")
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const watcher = () => watcherStatus(merchant, "bitcoin")
const endpoint = async (front: RpcFront) => endpointReport(await watcher(), front.url)
const statusOf = async (id: string) => (await merchant.api(`/api/checkout/invoices/${id}`)).body.status
const newInvoice = async () => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 5 } })
  expect(created.status).toBe(201)
  const option = optionOn(created.body, "bitcoin")
  return { id: created.body.id as string, address: option.destinationAddress as string, sats: BigInt(Math.round(option.quotedAmount * 1e8)) }
}

const startApp = async () => {
  await app?.close()
  for (const front of [a, b, c]) {
    front.mode = "pass"
    front.rawBlocks = true
    front.omitTxids.length = 0
    front.denyTxids.length = 0
    front.inventTxs.length = 0
  }
  app = await startChainApp({}, {
    CHECKOUT_ESPLORA_URL: `${a.url},${b.url},${c.url}`,
    CHECKOUT_RPC_TIMEOUT_MS: "1000",
    CHECKOUT_CONFIRMATIONS_BITCOIN: "2",
    CHECKOUT_ENDPOINT_QUARANTINE_MS: String(QUARANTINE_MS)
  })
  merchant = await app.createMerchant()
  esplora.mine(1)
  await poll()
}

/** Polls (a block mined each time) until `done`: an endpoint back from errors or quarantine may wait for seconds. */
const pollUntil = async (done: () => Promise<boolean>, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error("the condition was not reached")
    await sleep(400)
    esplora.mine(1)
    await poll()
  }
}

const neverQuarantined = async (honest: RpcFront) => {
  const state = await endpoint(honest)
  expect(state.state).not.toBe("disagreeing")
  expect(state.refusedTransfers ?? 0).toBe(0)
}

beforeAll(async () => {
  esplora = await startEsploraSimulator({ genesisTime: Math.floor(Date.now() / 1000) - 600, blockSeconds: 1 })
  ;[a, b, c] = await Promise.all([0, 1, 2].map(() => startRpcFront(esplora.url, "esplora")))
  esplora.mine(3)
}, 120_000)

afterAll(async () => {
  await app?.close()
  await Promise.all([a, b, c].map((front) => front?.close()))
  await esplora?.close()
})

describe("a bitcoin watcher with several Esplora endpoints: omissions from JSON pages", () => {
  it("a first endpoint without raw blocks that leaves a payment out of its pages and denies it: found by the re-read at depth, disputed, credited once a third endpoint outvotes it", async () => {
    await startApp()
    c.mode = "error"
    a.rawBlocks = false
    const invoice = await newInvoice()
    // Paid and mined before any poll: the mempool read shows nothing of it.
    const txid = esplora.pay([{ address: invoice.address, sats: invoice.sats }])
    a.omitTxids.push(txid)
    a.denyTxids.push(txid)
    esplora.mine(1)
    await poll()
    expect(await statusOf(invoice.id)).toBe("awaiting_payment")
    // Two blocks deep, the range is read again from b (a raw block, checked against its header).
    await pollUntil(async () => (await statusOf(invoice.id)) === "payment_detected", 30_000)
    expect((await watcher()).awaitingCorroboration).toMatchObject({ payments: 1, disputed: 1 })
    expect((await endpoint(a)).refusedTransfers ?? 0).toBe(0)
    await neverQuarantined(b)

    c.mode = "pass"
    await pollUntil(async () => (await statusOf(invoice.id)) === "confirmed")
    expect(await endpoint(a)).toMatchObject({ state: "disagreeing", refusedTransfers: 1 })
    await neverQuarantined(b)
    await neverQuarantined(c)
  })
})

describe("a bitcoin watcher: the blocks read while an endpoint was quarantined are read again from it when it returns", () => {
  it("credits a real payment the two endpoints read meanwhile left out (scan and re-read at depth), once the quarantined one is back", async () => {
    await startApp()
    // a invents an output in a real block: b and c deny it, a is quarantined (disagreeing).
    const victim = await newInvoice()
    const payee = await newInvoice()
    esplora.pay([{ address: payee.address, sats: payee.sats }])
    const [blockHash] = esplora.mine(1)
    a.inventTxs.push({ blockHash, tx: { txid: "e".repeat(64), vout: [{ scriptpubkey_address: victim.address, value: Number(victim.sats) }] } })
    for (let attempt = 0; attempt < 4; attempt++) await poll()
    a.inventTxs.length = 0
    expect(await endpoint(a)).toMatchObject({ state: "disagreeing", refusedTransfers: 1 })

    // While a is out, b (read from) and c (the re-read at depth) both serve pages without a real payment.
    const invoice = await newInvoice()
    const txid = esplora.pay([{ address: invoice.address, sats: invoice.sats }])
    for (const front of [b, c]) {
      front.rawBlocks = false
      front.omitTxids.push(txid)
    }
    esplora.mine(1)
    for (let round = 0; round < 4; round++) {
      esplora.mine(1)
      await poll()
    }
    expect(await statusOf(invoice.id)).toBe("awaiting_payment")
    expect(await statusOf(victim.id)).toBe("awaiting_payment")
    expect((await endpoint(a)).state).toBe("disagreeing")
    for (const front of [b, c]) front.omitTxids.length = 0

    // The quarantine ends: the range is read from a, the payment corroborated by b and c, credited.
    await pollUntil(async () => (await statusOf(invoice.id)) === "confirmed", QUARANTINE_MS + 60_000)
    expect(await statusOf(victim.id)).toBe("awaiting_payment")
    expect((await endpoint(a)).refusedTransfers).toBe(1)
    expect((await endpoint(a)).state).not.toBe("disagreeing")
  })
})
