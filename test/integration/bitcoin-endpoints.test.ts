import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ChainWatchers } from "../../src/chains/ChainWatchers.ts"
import { type EsploraSimulator, startEsploraSimulator } from "../support/EsploraSimulator.ts"
import { privateDatabase } from "../support/PrivateDatabase.ts"
import { type RpcFront, startRpcFront } from "../support/RpcFront.ts"
import { startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import type { JsonBody } from "../support/Json.ts"

// Three Esplora endpoints in front of one simulator: a (preferred), b, c.
let esplora: EsploraSimulator
let a: RpcFront
let b: RpcFront
let c: RpcFront
let app: TestApp
let merchant: TestMerchant
let database: Awaited<ReturnType<typeof privateDatabase>>

const poll = () => app.run(Effect.flatMap(ChainWatchers, (watchers) => watchers.poll("bitcoin")))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const watcher = async () => {
  const { body } = await merchant.dashboard("/api/dashboard/chain-watchers")
  return (body.watchers as ReadonlyArray<JsonBody>).find((entry) => entry.network === "bitcoin")
}
const endpoint = async (front: RpcFront) => (await watcher()).endpoints.find((entry: JsonBody) => entry.endpoint === front.url)
const inUse = async () => ((await watcher()).endpoints as ReadonlyArray<JsonBody>).find((entry) => entry.inUse)?.endpoint
const processed = async () => Number((await watcher()).processedHeight)
const pollUntilInUse = async (front: RpcFront) => {
  const deadline = Date.now() + 30_000
  while (true) {
    await poll()
    if ((await inUse()) === front.url) return
    if (Date.now() > deadline) throw new Error(`${front.url} was not used again`)
    await sleep(200)
  }
}

beforeAll(async () => {
  esplora = await startEsploraSimulator({ genesisTime: Math.floor(Date.now() / 1000) - 600, blockSeconds: 1 })
  ;[a, b, c] = await Promise.all([0, 1, 2].map(() => startRpcFront(esplora.url, "esplora")))
  database = await privateDatabase()
  app = await startTestApp({}, {
    ...(database.url === undefined ? {} : { DATABASE_URL: database.url }),
    CHECKOUT_ESPLORA_URL: `${a.url}/key/SECRETKEY,${b.url},${c.url}`,
    CHECKOUT_RPC_TIMEOUT_MS: "1000",
    CHECKOUT_CONFIRMATIONS_BITCOIN: "2"
  })
  merchant = await app.createMerchant()
  esplora.mine(3)
  await poll()
}, 120_000)

afterAll(async () => {
  await app?.close()
  await Promise.all([a, b, c].map((front) => front?.close()))
  await esplora?.close()
  await database?.drop()
})

describe("a bitcoin watcher with several Esplora endpoints", () => {
  it("fails over on HTTP 429, leaves it alone for its Retry-After, and returns to the preferred one", async () => {
    expect(await inUse()).toBe(a.url)
    a.mode = "rateLimited"
    a.retryAfterSeconds = 6
    esplora.mine(1)
    const height = await processed()
    await poll()
    expect(await processed()).toBe(height + 1)
    const limited = await endpoint(a)
    expect(limited).toMatchObject({ state: "rate_limited", inUse: false })
    const asked = a.requests.length
    esplora.mine(1)
    await poll()
    if (Date.now() < Date.parse(limited.retryAt)) expect(a.requests.length).toBe(asked)
    a.mode = "pass"
    await pollUntilInUse(a)
  })

  it("does not read from a lagging endpoint", async () => {
    a.lag = 3
    const asked = a.requests.length
    esplora.mine(1)
    await poll()
    expect(await endpoint(a)).toMatchObject({ state: "lagging", inUse: false })
    expect(a.requests.slice(asked).every((path) => path.startsWith("/blocks/tip"))).toBe(true)
    a.lag = 0
    await pollUntilInUse(a)
  })

  it("outvotes a lying minority, and halts on a 1-1 disagreement until a majority agrees", async () => {
    let next = esplora.tipHeight() + 1
    c.lieFrom(next)
    esplora.mine(1)
    for (let attempt = 0; attempt < 3; attempt++) await poll()
    expect(await processed()).toBe(next)
    expect(await endpoint(c)).toMatchObject({ state: "disagreeing" })
    c.truth()

    b.mode = "error"
    next = esplora.tipHeight() + 1
    a.lieFrom(next)
    esplora.mine(2)
    for (let attempt = 0; attempt < 3; attempt++) await poll()
    expect(await processed()).toBe(next - 1)
    expect((await watcher()).disagreementHeight).toBe(String(next))
    expect(await (await fetch(`${app.baseUrl}/metrics`)).text()).toContain(`checkout_chain_disagreement{network="bitcoin"} 1`)
    b.mode = "pass"
    const deadline = Date.now() + 30_000
    while ((await processed()) < next && Date.now() < deadline) {
      await sleep(300)
      await poll()
    }
    expect(await processed()).toBeGreaterThanOrEqual(next)
    expect((await watcher()).disagreementHeight).toBeNull()
    a.truth()
  })
})

describe("a bitcoin watcher with several Esplora endpoints: a payment no other endpoint can corroborate yet", () => {
  const newInvoice = async () => {
    const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 3 } })
    const option = (created.body.paymentOptions as ReadonlyArray<JsonBody>).find((candidate) => candidate.network === "bitcoin")
    return { id: created.body.id as string, address: option.destinationAddress as string, sats: BigInt(Math.round(option.quotedAmount * 1e8)) }
  }
  const statusOf = async (id: string) => (await merchant.api(`/api/checkout/invoices/${id}`)).body.status
  const pollUntil = async (done: () => Promise<boolean>) => {
    const deadline = Date.now() + 40_000
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error("the condition was not reached")
      await sleep(300)
      esplora.mine(1)
      await poll()
    }
  }

  /** A real payment while `down` are down: detected within a poll, never confirmed while alone, confirmed once they are back. */
  const aloneUntilBack = async (down: ReadonlyArray<RpcFront>) => {
    for (const front of down) front.mode = "error"
    const invoice = await newInvoice()
    esplora.pay([{ address: invoice.address, sats: invoice.sats }])
    esplora.mine(1)
    await poll()
    expect(await statusOf(invoice.id)).toBe("payment_detected")
    for (let round = 0; round < 3; round++) {
      esplora.mine(2)
      await poll()
    }
    expect(await statusOf(invoice.id)).toBe("payment_detected")
    expect((await watcher()).awaitingCorroboration.payments).toBeGreaterThanOrEqual(1)
    for (const front of down) front.mode = "pass"
    await pollUntil(async () => (await statusOf(invoice.id)) === "confirmed")
    expect((await watcher()).awaitingCorroboration).toMatchObject({ payments: 0, disputed: 0 })
  }

  it("with the second and third endpoints down", () => aloneUntilBack([b, c]))

  it("with the first and third endpoints down", () => aloneUntilBack([a, c]))

  it("a second endpoint that denies a real payment is no verdict: disputed, the block cursor waits, credited once it turns honest", async () => {
    await pollUntilInUse(a)
    c.mode = "error"
    const invoice = await newInvoice()
    const txid = esplora.pay([{ address: invoice.address, sats: invoice.sats }])
    b.denyTxids.push(txid)
    const [blockHash] = esplora.mine(3)
    const height = Number((await (await fetch(`${esplora.url}/block/${blockHash}`)).json()).height)
    for (let round = 0; round < 3; round++) await poll()
    expect(await statusOf(invoice.id)).toBe("payment_detected")
    expect(await processed()).toBeLessThan(height)
    expect(await endpoint(a)).toMatchObject({ state: "healthy", refusedTransfers: 0 })
    expect(await endpoint(b)).toMatchObject({ refusedTransfers: 0 })
    expect((await watcher()).awaitingCorroboration).toMatchObject({ payments: 1, disputed: 1 })
    b.denyTxids.length = 0
    await pollUntil(async () => (await statusOf(invoice.id)) === "confirmed")
    expect(await processed()).toBeGreaterThanOrEqual(height)
    c.mode = "pass"
  })
})

describe("a bitcoin watcher with several Esplora endpoints: a liar listed first that omits a payment from its raw block", () => {
  it("refuses the block (its transactions do not match its header's merkle root), reads it from the next endpoint, and credits the payment", async () => {
    await pollUntilInUse(a)
    const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 4 } })
    const option = (created.body.paymentOptions as ReadonlyArray<JsonBody>).find((candidate) => candidate.network === "bitcoin")
    const txid = esplora.pay([{ address: option.destinationAddress, sats: BigInt(Math.round(option.quotedAmount * 1e8)) }])
    a.omitTxids.push(txid)
    a.requests.length = 0
    const [blockHash] = esplora.mine(1)
    const height = esplora.tipHeight()
    const deadline = Date.now() + 30_000
    while ((await processed()) < height && Date.now() < deadline) {
      await poll()
      await sleep(200)
    }
    expect(a.requests).toContain(`/block/${blockHash}/raw`)
    expect(await processed()).toBeGreaterThanOrEqual(height)
    expect((await merchant.api(`/api/checkout/invoices/${created.body.id}`)).body.status).toBe("payment_detected")
    a.omitTxids.length = 0
    await pollUntilInUse(a)
  })
})

describe("a bitcoin watcher with several Esplora endpoints: corroborated transfers", () => {
  const newInvoice = async () => {
    const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 5 } })
    const option = (created.body.paymentOptions as ReadonlyArray<JsonBody>).find((candidate) => candidate.network === "bitcoin")
    return { id: created.body.id as string, address: option.destinationAddress as string, sats: BigInt(Math.round(option.quotedAmount * 1e8)) }
  }
  const statusOf = async (id: string) => (await merchant.api(`/api/checkout/invoices/${id}`)).body.status
  const refusedMetric = (front: RpcFront, count: number) => `checkout_chain_endpoint_refused_transfers_total{network="bitcoin",endpoint="${front.url}"} ${count}`

  /** A made-up output to one invoice's address reported by `liar`, in the block of a real payment to another. */
  const liarReports = async (liar: RpcFront, nonce: number) => {
    const victim = await newInvoice()
    const payee = await newInvoice()
    esplora.pay([{ address: payee.address, sats: payee.sats }])
    const [blockHash] = esplora.mine(1)
    const tx = { txid: nonce.toString(16).padStart(64, "e"), vout: [{ scriptpubkey_address: victim.address, value: Number(victim.sats) }] }
    liar.inventTxs.push({ blockHash, tx })
    for (let attempt = 0; attempt < 4; attempt++) await poll()
    liar.inventTxs.length = 0
    return { victim, payee }
  }

  it("does not credit an output only the first-listed endpoint reports, credits a real one in the same block, and marks it disagreeing", async () => {
    esplora.mine(1)
    await pollUntilInUse(a)
    const { victim, payee } = await liarReports(a, 1)
    expect(await statusOf(victim.id)).toBe("awaiting_payment")
    expect(["payment_detected", "confirmed"]).toContain(await statusOf(payee.id))
    expect(await endpoint(a)).toMatchObject({ state: "disagreeing", inUse: false, refusedTransfers: 1 })
    expect(await (await fetch(`${app.baseUrl}/metrics`)).text()).toContain(refusedMetric(a, 1))
  })

  it("does not credit an output invented by the endpoint that took over after a failover", async () => {
    a.mode = "error"
    const { victim, payee } = await liarReports(b, 2)
    expect(await statusOf(victim.id)).toBe("awaiting_payment")
    expect(["payment_detected", "confirmed"]).toContain(await statusOf(payee.id))
    expect(await endpoint(b)).toMatchObject({ state: "disagreeing", refusedTransfers: 1 })
    expect(await (await fetch(`${app.baseUrl}/metrics`)).text()).toContain(refusedMetric(b, 1))
    a.mode = "pass"
  })
})
