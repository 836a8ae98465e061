import { type Address, getAddress } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { AnvilNode } from "../support/Anvil.ts"
import { type EvmEndpoints, startEvmEndpoints, USDC } from "../support/EvmEndpoints.ts"
import type { RpcFront } from "../support/RpcFront.ts"
import type { TestApp, TestMerchant } from "../support/TestApp.ts"
import { endpointReport, optionsOf, watcherStatus } from "../support/WatcherStatus.ts"

// Three endpoints in front of one anvil: a (preferred), b, c. Each test leaves them all passing.

let node: AnvilNode
let a: RpcFront
let b: RpcFront
let c: RpcFront
let app: TestApp
let merchant: TestMerchant
let payer: Address
let setup: EvmEndpoints

const poll = () => setup.poll()
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const watcher = () => watcherStatus(merchant, "ethereum")
const endpoint = async (front: RpcFront) => endpointReport(await watcher(), front.url)
const inUse = async () => (await watcher()).endpoints.find((entry) => entry.inUse)?.endpoint
const metrics = async () => (await fetch(`${app.baseUrl}/metrics`)).text()

/** Polls until `front` is the one in use again (it recovers after its back-off or Retry-After). */
const pollUntilInUse = async (front: RpcFront, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs
  while (true) {
    await poll()
    if ((await inUse()) === front.url) return
    if (Date.now() > deadline) throw new Error(`${front.url} was not used again`)
    await sleep(200)
  }
}

/** Polls (mining a block each time) until `done`, at most 40 s: endpoints back off for seconds after failures. */
const pollUntil = async (done: () => Promise<boolean>, timeoutMs = 40_000) => {
  const deadline = Date.now() + timeoutMs
  while (true) {
    await node.mine(1)
    await poll()
    if (await done()) return
    if (Date.now() > deadline) throw new Error("the condition was not reached")
    await sleep(300)
  }
}

const processed = async () => BigInt((await watcher()).processedHeight!)

const newInvoiceAddress = async () => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 5 } })
  expect(created.status).toBe(201)
  return getAddress(optionsOf(created.body)[0].destinationAddress)
}

beforeAll(async () => {
  setup = await startEvmEndpoints({ rpcUrls: (a, b, c) => `${a.url}/v2/SECRETKEY, ${b.url}, ${c.url}/?apikey=SECRETKEY` })
  ;({ node, a, b, c, app, merchant, payer } = setup)
}, 120_000)

afterAll(async () => {
  await setup?.close()
})

describe("an EVM watcher with several endpoints", () => {
  it("reads from the preferred one and publishes every endpoint by its origin only", async () => {
    const status = await watcher()
    expect(status.endpoints.map((entry) => [entry.endpoint, entry.state, entry.inUse])).toEqual([
      [a.url, "healthy", true],
      [b.url, "healthy", false],
      [c.url, "healthy", false]
    ])
    expect(status.disagreementHeight).toBeNull()
    const text = await metrics()
    expect(text).not.toContain("SECRETKEY")
    expect(text).toContain(`checkout_chain_endpoint_up{network="ethereum",endpoint="${a.url}"} 1`)
    expect(text).toContain(`checkout_chain_disagreement{network="ethereum"} 0`)
  })

  it("fails over on an error, finds a payment through the next endpoint, and returns to the preferred one", async () => {
    a.mode = "error"
    const to = await newInvoiceAddress()
    await node.transfer(USDC, payer, to, 5_000_000n)
    const report = await poll()
    expect(report.evidence).toBe(1)
    expect(await endpoint(a)).toMatchObject({ state: "failing", inUse: false })
    expect(await inUse()).toBe(b.url)
    expect(await metrics()).toContain(`checkout_chain_endpoint_up{network="ethereum",endpoint="${a.url}"} 0`)
    a.mode = "pass"
    await node.mine(1)
    await pollUntilInUse(a)
    expect(await endpoint(a)).toMatchObject({ state: "healthy", lastError: null })
  })

  it("on HTTP 429 leaves the endpoint alone for its Retry-After, then uses it again", async () => {
    a.mode = "rateLimited"
    a.retryAfterSeconds = 8
    await node.mine(1)
    const before = Date.now()
    await poll()
    const limited = await endpoint(a)
    expect(limited.state).toBe("rate_limited")
    expect(Date.parse(limited.retryAt!)).toBeGreaterThanOrEqual(before + 7_000)
    expect(await inUse()).toBe(b.url)
    const asked = a.requests.length
    await node.mine(1)
    await poll()
    // Within its Retry-After (if the machine is so slow that it passed, the check says nothing).
    if (Date.now() < Date.parse(limited.retryAt!)) expect(a.requests.length).toBe(asked)
    a.mode = "pass"
    await pollUntilInUse(a)
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(limited.retryAt!))
  })

  it("fails over from an endpoint that hangs (its time-out), and returns to it", async () => {
    a.mode = "hang"
    await node.mine(1)
    const height = await processed()
    await poll()
    expect(await processed()).toBeGreaterThan(height)
    expect(await endpoint(a)).toMatchObject({ state: "failing", inUse: false })
    expect(await inUse()).toBe(b.url)
    a.mode = "pass"
    await pollUntilInUse(a)
  })

  it("does not read from an endpoint whose head lags more than the allowed blocks", async () => {
    await node.mine(6)
    await poll()
    a.lag = 5
    const asked = a.requests.length
    await node.mine(1)
    await poll()
    expect(await endpoint(a)).toMatchObject({ state: "lagging", inUse: false })
    // Asked for its head, and nothing else.
    expect(a.requests.slice(asked)).toEqual(["eth_getBlockByNumber"])
    expect(await inUse()).toBe(b.url)
    a.lag = 0
    await pollUntilInUse(a)
  })

  it("outvotes a minority that lies about a block hash", async () => {
    const next = Number(await node.publicClient.getBlockNumber()) + 1
    c.lieFrom(next)
    const to = await newInvoiceAddress()
    const sent = await node.transfer(USDC, payer, to, 5_000_000n)
    expect(Number(sent.blockNumber)).toBe(next)
    let evidence = 0
    for (let attempt = 0; attempt < 3 && evidence === 0; attempt++) evidence += (await poll()).evidence
    expect(evidence).toBe(1)
    expect(await processed()).toBeGreaterThanOrEqual(BigInt(next))
    expect(await endpoint(c)).toMatchObject({ state: "disagreeing", disagreesAt: String(next) })
    expect((await watcher()).disagreementHeight).toBeNull()
    c.truth()
    await node.mine(1)
    await poll()
    expect(await endpoint(c)).toMatchObject({ state: "healthy" })
  })

  it("with a 1-1 disagreement does not advance past the disputed height until a majority agrees, and says so", async () => {
    c.mode = "error"
    const next = Number(await node.publicClient.getBlockNumber()) + 1
    a.lieFrom(next)
    await node.mine(3)
    for (let attempt = 0; attempt < 3; attempt++) await poll()
    expect(await processed()).toBeLessThan(BigInt(next))
    const status = await watcher()
    expect(status.disagreementHeight).toBe(String(next))
    expect(status.endpoints.slice(0, 2).map((entry) => entry.state)).toEqual(["disagreeing", "disagreeing"])
    expect(await metrics()).toContain(`checkout_chain_disagreement{network="ethereum"} 1`)
    // The third endpoint answers again and sides with b: a majority.
    c.mode = "pass"
    let height = await processed()
    const deadline = Date.now() + 30_000
    while (height < BigInt(next) && Date.now() < deadline) {
      await sleep(300)
      await poll()
      height = await processed()
    }
    expect(height).toBeGreaterThanOrEqual(BigInt(next))
    expect((await watcher()).disagreementHeight).toBeNull()
    expect(await endpoint(a)).toMatchObject({ state: "disagreeing" })
    expect(await metrics()).toContain(`checkout_chain_disagreement{network="ethereum"} 0`)
    a.truth()
  })
})

describe("an EVM watcher with several endpoints: a payment no other endpoint can corroborate yet", () => {
  const newInvoice = async () => {
    const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 3 } })
    return { id: created.body.id as string, address: getAddress(optionsOf(created.body)[0].destinationAddress) }
  }
  const statusOf = async (id: string) => (await merchant.api(`/api/checkout/invoices/${id}`)).body.status

  /** A real 3 USDC payment while `down` are down: detected within a poll, never confirmed while alone, confirmed once they are back. */
  const aloneUntilBack = async (down: ReadonlyArray<RpcFront>) => {
    for (const front of down) front.mode = "error"
    const invoice = await newInvoice()
    await node.transfer(USDC, payer, invoice.address, 3_000_000n)
    await poll()
    expect(await statusOf(invoice.id)).toBe("payment_detected")
    for (let round = 0; round < 3; round++) {
      await node.mine(2)
      await poll()
    }
    expect(await statusOf(invoice.id)).toBe("payment_detected")
    const waiting = (await watcher()).awaitingCorroboration!
    expect(waiting.payments).toBeGreaterThanOrEqual(1)
    expect(Date.parse(waiting.since!)).toBeLessThanOrEqual(Date.now())
    for (const front of down) front.mode = "pass"
    await pollUntil(async () => (await statusOf(invoice.id)) === "confirmed")
    expect((await watcher()).awaitingCorroboration).toMatchObject({ payments: 0, disputed: 0 })
    // Nobody blamed. An endpoint just back may still read "failing" until its back-off lets a head round ask it again.
    for (const front of [a, b, c]) {
      const state = await endpoint(front)
      expect(state).toMatchObject({ refusedTransfers: 0 })
      expect(state.state).not.toBe("disagreeing")
    }
  }

  it("with the second and third endpoints down", () => aloneUntilBack([b, c]))

  it("with the first and third endpoints down", () => aloneUntilBack([a, c]))

  it("a reverse liar as the second endpoint (denies and hides) is no verdict: disputed, the scan waits, credited once it turns honest", async () => {
    c.mode = "error"
    const invoice = await newInvoice()
    b.hideAddresses.push(invoice.address.toLowerCase())
    const sent = await node.transfer(USDC, payer, invoice.address, 3_000_000n)
    await node.mine(3)
    for (let round = 0; round < 3; round++) await poll()
    expect(await statusOf(invoice.id)).toBe("payment_detected")
    expect(await processed()).toBeLessThan(sent.blockNumber)
    expect(await endpoint(a)).toMatchObject({ state: "healthy", refusedTransfers: 0 })
    expect(await endpoint(b)).toMatchObject({ refusedTransfers: 0 })
    expect((await watcher()).awaitingCorroboration).toMatchObject({ payments: 1, disputed: 1 })
    expect(await metrics()).toContain(`checkout_chain_disputed_transfers{network="ethereum"} 1`)
    b.hideAddresses.length = 0
    await pollUntil(async () => (await statusOf(invoice.id)) === "confirmed")
    expect(await processed()).toBeGreaterThanOrEqual(sent.blockNumber)
    c.mode = "pass"
  })

  it("a reverse liar as the first endpoint cannot hide a payment: read again from another endpoint at depth, disputed, credited once it turns honest", async () => {
    await pollUntilInUse(a)
    c.mode = "error"
    const invoice = await newInvoice()
    a.hideAddresses.push(invoice.address.toLowerCase())
    await node.transfer(USDC, payer, invoice.address, 3_000_000n)
    for (let round = 0; round < 4; round++) {
      await node.mine(1)
      await poll()
    }
    expect(await statusOf(invoice.id)).toBe("payment_detected")
    expect(await endpoint(a)).toMatchObject({ refusedTransfers: 0 })
    expect(await endpoint(b)).toMatchObject({ state: "healthy", refusedTransfers: 0 })
    expect((await watcher()).awaitingCorroboration).toMatchObject({ payments: 1, disputed: 1 })
    a.hideAddresses.length = 0
    await pollUntil(async () => (await statusOf(invoice.id)) === "confirmed")
    c.mode = "pass"
  })

  it("a reverse liar as the second endpoint is outvoted when the third comes back: credited, the liar marked disagreeing", async () => {
    c.mode = "error"
    const invoice = await newInvoice()
    b.hideAddresses.push(invoice.address.toLowerCase())
    await node.transfer(USDC, payer, invoice.address, 3_000_000n)
    await node.mine(3)
    for (let round = 0; round < 2; round++) await poll()
    expect(await statusOf(invoice.id)).toBe("payment_detected")
    c.mode = "pass"
    await pollUntil(async () => (await statusOf(invoice.id)) === "confirmed")
    expect(await endpoint(a)).toMatchObject({ state: "healthy", refusedTransfers: 0 })
    expect(await endpoint(b)).toMatchObject({ state: "disagreeing", refusedTransfers: 1 })
    b.hideAddresses.length = 0
  })
})

describe("an EVM watcher with several endpoints: corroborated transfers", () => {
  const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
  const word = (value: string | bigint) => `0x${(typeof value === "bigint" ? value.toString(16) : value.slice(2).toLowerCase()).padStart(64, "0")}`
  /** A Transfer log no node knows: the real block, a made-up transaction. */
  const madeUpLog = (to: Address, amount: bigint, block: { blockNumber: bigint; blockHash: string }, nonce: number) => ({
    address: USDC.toLowerCase(),
    topics: [TRANSFER_TOPIC, word(payer), word(to)],
    data: word(amount),
    blockNumber: `0x${block.blockNumber.toString(16)}`,
    blockHash: block.blockHash,
    transactionHash: `0x${nonce.toString(16).padStart(64, "e")}`,
    transactionIndex: "0x7",
    logIndex: "0x70",
    removed: false
  })
  const newInvoice = async () => {
    const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 5 } })
    return { id: created.body.id as string, address: getAddress(optionsOf(created.body)[0].destinationAddress) }
  }
  const statusOf = async (id: string) => (await merchant.api(`/api/checkout/invoices/${id}`)).body.status
  const refusedMetric = (front: RpcFront, count: number) => `checkout_chain_endpoint_refused_transfers_total{network="ethereum",endpoint="${front.url}"} ${count}`

  /** A made-up transfer to one invoice reported by `liar`, in the block of a real payment to another. */
  const liarReports = async (liar: RpcFront, nonce: number, stop = true) => {
    const victim = await newInvoice()
    const payee = await newInvoice()
    const sent = await node.transfer(USDC, payer, payee.address, 5_000_000n)
    liar.inventLogs.push(madeUpLog(victim.address, 5_000_000n, sent, nonce))
    for (let attempt = 0; attempt < 4; attempt++) await poll()
    if (stop) liar.inventLogs.length = 0
    return { victim, payee }
  }

  it("does not credit a transfer only the first-listed endpoint reports, credits a real one in the same block, and marks it disagreeing", async () => {
    await node.mine(1)
    await pollUntilInUse(a)
    const { victim, payee } = await liarReports(a, 1)
    expect(await statusOf(victim.id)).toBe("awaiting_payment")
    expect(["payment_detected", "confirmed"]).toContain(await statusOf(payee.id))
    expect(await endpoint(a)).toMatchObject({ state: "disagreeing", inUse: false, refusedTransfers: 1 })
    expect(await endpoint(c)).toMatchObject({ state: "healthy", refusedTransfers: 0 })
    const text = await metrics()
    expect(text).toContain(refusedMetric(a, 1))
    expect(text).toContain(refusedMetric(c, 0))
  })

  it("a liar while the honest endpoints are down: detected at most, never confirmed, invalidated when they return and deny it", async () => {
    a.mode = "error"
    c.mode = "error"
    const refusedBefore = (await endpoint(b)).refusedTransfers ?? 0
    const { victim, payee } = await liarReports(b, 2, false)
    expect(await statusOf(victim.id)).toBe("payment_detected")
    expect(await statusOf(payee.id)).toBe("payment_detected")
    // One voice: no one is blamed, nothing is confirmed however deep the block gets.
    expect(await endpoint(b)).toMatchObject({ refusedTransfers: refusedBefore })
    expect((await watcher()).awaitingCorroboration).toMatchObject({ payments: 2, disputed: 0 })
    expect(await metrics()).toContain(`checkout_chain_awaiting_corroboration{network="ethereum"} 2`)
    a.mode = "pass"
    c.mode = "pass"
    await pollUntil(async () => (await statusOf(victim.id)) === "awaiting_payment" && (await statusOf(payee.id)) === "confirmed")
    expect(await endpoint(b)).toMatchObject({ state: "disagreeing", refusedTransfers: refusedBefore + 1 })
    expect(await metrics()).toContain(refusedMetric(b, refusedBefore + 1))
    expect((await watcher()).awaitingCorroboration).toMatchObject({ payments: 0 })
    b.inventLogs.length = 0
  })
})
