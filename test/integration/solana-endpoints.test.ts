import { Keypair } from "@solana/web3.js"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fundedSolanaWallet, pollWatcher, sendPrepared, solanaUsdcMethod, startChainApp, startSolanaWithMints } from "../support/ChainSuites.ts"
import { type RpcFront, startRpcFront } from "../support/RpcFront.ts"
import type { SolanaNode } from "../support/SolanaRpc.ts"
import { publicRequest, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import type { JsonBody } from "../support/Json.ts"

// Three endpoints in front of one litesvm node: a (preferred), b, c. Each test leaves them all passing.
const USDC = Keypair.generate().publicKey
const MAX_LAG = 50

let node: SolanaNode
let a: RpcFront
let b: RpcFront
let c: RpcFront
let app: TestApp
let merchant: TestMerchant

const poll = () => pollWatcher(app, "solana")
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const watcher = async () => {
  const { body } = await merchant.dashboard("/api/dashboard/chain-watchers")
  return (body.watchers as ReadonlyArray<JsonBody>).find((entry) => entry.network === "solana")
}
const endpoint = async (front: RpcFront) => (await watcher()).endpoints.find((entry: JsonBody) => entry.endpoint === front.url)
const inUse = async () => ((await watcher()).endpoints as ReadonlyArray<JsonBody>).find((entry) => entry.inUse)?.endpoint

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

const prepare = (invoiceId: string, optionId: string, payer: Keypair) =>
  publicRequest(app.baseUrl, `/api/checkout/pay/${invoiceId}/prepare-solana-wallet-payment`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ paymentOptionId: optionId, payerPublicKey: payer.publicKey.toBase58() })
  })

const newInvoice = async () => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 5 } })
  expect(created.status).toBe(201)
  const option = (created.body.paymentOptions as ReadonlyArray<JsonBody>).find((candidate) => candidate.network === "solana")
  return { id: created.body.id as string, optionId: option.id as string }
}

const newPayer = () => fundedSolanaWallet(node, [USDC], 1_000_000_000n)

beforeAll(async () => {
  node = await startSolanaWithMints(USDC)
  ;[a, b, c] = await Promise.all([0, 1, 2].map(() => startRpcFront(node.url, "jsonrpc")))
  app = await startChainApp({}, {
    CHECKOUT_RPC_URL_SOLANA: `${a.url}/key/SECRETKEY, ${b.url}, ${c.url}/?api-key=SECRETKEY`,
    CHECKOUT_RPC_TIMEOUT_MS: "1000",
    // Every test prepares its payments through the API: more than the default 10 a minute.
    CHECKOUT_SOLANA_PREPARE_RATE_LIMIT: "60",
    CHECKOUT_MAX_ENDPOINT_LAG_SOLANA: String(MAX_LAG),
    CHECKOUT_TOKEN_SOLANA_USDC: USDC.toBase58()
  })
  merchant = await app.createMerchant({ methods: [solanaUsdcMethod()] })
  await poll()
}, 120_000)

afterAll(async () => {
  await app?.close()
  await Promise.all([a, b, c].map((front) => front?.close()))
  await node?.close()
})

describe("a Solana watcher with several endpoints", () => {
  it("reads from the preferred one and publishes every endpoint by its origin only", async () => {
    const status = await watcher()
    expect(status.endpoints.map((entry: JsonBody) => [entry.endpoint, entry.state, entry.inUse])).toEqual([
      [a.url, "healthy", true],
      [b.url, "healthy", false],
      [c.url, "healthy", false]
    ])
    expect(status.endpoints[0].headHeight).toBe(String(node.slot()))
    expect(status.disagreementHeight).toBeNull()
    expect(JSON.stringify(status)).not.toContain("SECRETKEY")
    // Every endpoint is asked for its slot; only the preferred one is read from.
    expect(b.requests).toEqual(["getSlot"])
    expect(a.requests).toContain("getBlockTime")
  })

  it("fails over on an error, for the preparation and the watcher, then returns to the preferred one", async () => {
    a.mode = "error"
    const invoice = await newInvoice()
    const payer = newPayer()
    const prepared = await prepare(invoice.id, invoice.optionId, payer)
    expect(prepared.status).toBe(200)
    expect(b.requests).toContain("getLatestBlockhash")
    await sendPrepared(node, prepared.body.transaction, payer)
    const report = await poll()
    expect(report.evidence).toBe(1)
    expect(await endpoint(a)).toMatchObject({ state: "failing", inUse: false })
    expect((await endpoint(a)).lastError).toContain("503")
    expect(await inUse()).toBe(b.url)
    a.mode = "pass"
    node.advance(1)
    await pollUntilInUse(a)
    expect(await endpoint(a)).toMatchObject({ state: "healthy", lastError: null })
  })

  it("never drops a payment because the endpoint it failed over to lacks the history", async () => {
    const invoice = await newInvoice()
    const payer = newPayer()
    const prepared = await prepare(invoice.id, invoice.optionId, payer)
    expect(prepared.status).toBe(200)
    await sendPrepared(node, prepared.body.transaction, payer)
    expect((await poll()).evidence).toBe(1)
    // The preferred endpoint fails; the next knows no transaction at all; the third still does.
    a.mode = "error"
    b.forgetful = true
    try {
      node.advance(1)
      await poll()
      await poll()
      const detail = await merchant.api(`/api/checkout/invoices/${invoice.id}`)
      expect(detail.body.payments).toHaveLength(1)
      expect(detail.body.payments[0].invalidatedAt).toBeNull()
      expect(detail.body.status).not.toBe("awaiting_payment")
    } finally {
      a.mode = "pass"
      b.forgetful = false
    }
    await pollUntilInUse(a)
  })

  it("tries a failed endpoint again for the preparation once its back-off is over, without a watcher poll", async () => {
    a.mode = "error"
    const invoice = await newInvoice()
    const payer = newPayer()
    expect((await prepare(invoice.id, invoice.optionId, payer)).status).toBe(200)
    a.mode = "pass"
    const asked = a.requests.length
    const deadline = Date.now() + 10_000
    while (!a.requests.slice(asked).includes("getLatestBlockhash")) {
      if (Date.now() > deadline) throw new Error("the preferred endpoint was not tried again")
      await sleep(300)
      expect((await prepare(invoice.id, invoice.optionId, payer)).status).toBe(200)
    }
    await poll()
    expect(await inUse()).toBe(a.url)
  })

  it("on HTTP 429 leaves the endpoint alone for its Retry-After, then uses it again", async () => {
    a.mode = "rateLimited"
    a.retryAfterSeconds = 8
    node.advance(1)
    const before = Date.now()
    await poll()
    const limited = await endpoint(a)
    expect(limited.state).toBe("rate_limited")
    expect(Date.parse(limited.retryAt)).toBeGreaterThanOrEqual(before + 7_000)
    expect(await inUse()).toBe(b.url)
    const asked = a.requests.length
    node.advance(1)
    await poll()
    // Within its Retry-After (if the machine is so slow that it passed, the check says nothing).
    if (Date.now() < Date.parse(limited.retryAt)) expect(a.requests.length).toBe(asked)
    a.mode = "pass"
    await pollUntilInUse(a)
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(limited.retryAt))
  })

  it("fails over from an endpoint that hangs (its time-out), for the watcher and the preparation", async () => {
    a.mode = "hang"
    const invoice = await newInvoice()
    expect((await prepare(invoice.id, invoice.optionId, newPayer())).status).toBe(200)
    node.advance(1)
    await poll()
    expect(await endpoint(a)).toMatchObject({ state: "failing", inUse: false })
    expect(await inUse()).toBe(b.url)
    a.mode = "pass"
    await pollUntilInUse(a)
  })

  it("does not read from an endpoint whose slot lags more than the allowed slots", async () => {
    node.advance(MAX_LAG + 20)
    await poll()
    a.lag = MAX_LAG + 10
    const asked = a.requests.length
    node.advance(1)
    await poll()
    expect(await endpoint(a)).toMatchObject({ state: "lagging", inUse: false, headHeight: String(node.slot() - MAX_LAG - 10) })
    // Asked for its slot, and nothing else.
    expect(a.requests.slice(asked)).toEqual(["getSlot"])
    expect(await inUse()).toBe(b.url)
    // Within the allowed lag it is read from again.
    a.lag = MAX_LAG - 10
    await poll()
    expect(await endpoint(a)).toMatchObject({ state: "healthy", inUse: true })
    a.lag = 0
  })
})

describe("a Solana watcher with several endpoints: a payment no other endpoint can corroborate yet", () => {
  const statusOf = async (id: string) => (await merchant.api(`/api/checkout/invoices/${id}`)).body.status

  /** A real payment while `down` are down: detected within a poll, never confirmed while alone, confirmed once they are back. */
  const aloneUntilBack = async (down: ReadonlyArray<RpcFront>) => {
    const invoice = await newInvoice()
    const payer = newPayer()
    const prepared = await prepare(invoice.id, invoice.optionId, payer)
    for (const front of down) front.mode = "error"
    await sendPrepared(node, prepared.body.transaction, payer)
    await poll()
    expect(await statusOf(invoice.id)).toBe("payment_detected")
    for (let round = 0; round < 3; round++) {
      node.advance(40)
      await poll()
    }
    expect(await statusOf(invoice.id)).toBe("payment_detected")
    expect((await watcher()).awaitingCorroboration.payments).toBeGreaterThanOrEqual(1)
    for (const front of down) front.mode = "pass"
    const deadline = Date.now() + 40_000
    while ((await statusOf(invoice.id)) !== "confirmed") {
      if (Date.now() > deadline) throw new Error("not confirmed once the endpoints were back")
      await sleep(300)
      node.advance(1)
      await poll()
    }
    expect((await watcher()).awaitingCorroboration).toMatchObject({ payments: 0, disputed: 0 })
  }

  it("with the second and third endpoints down", () => aloneUntilBack([b, c]))

  it("with the first and third endpoints down", () => aloneUntilBack([a, c]))
})

describe("a Solana watcher with several endpoints: the reverse liar (hides the payment and denies it)", () => {
  const statusOf = async (id: string) => (await merchant.api(`/api/checkout/invoices/${id}`)).body.status
  const cursorSlot = async () => {
    const rows = await app.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ slot: string }>`SELECT max(last_slot)::text AS slot FROM solana_account_cursors`))
    return BigInt(rows[0].slot)
  }
  /** A real payment whose signature `liar` leaves out of its lists and whose transaction it denies. */
  const paidBehind = async (liar: RpcFront) => {
    const invoice = await newInvoice()
    const payer = newPayer()
    const prepared = await prepare(invoice.id, invoice.optionId, payer)
    liar.hideSignatures.push(await sendPrepared(node, prepared.body.transaction, payer))
    return invoice
  }
  const untilConfirmed = async (id: string) => {
    const deadline = Date.now() + 40_000
    while ((await statusOf(id)) !== "confirmed") {
      if (Date.now() > deadline) throw new Error("not confirmed")
      node.advance(1)
      await poll()
      await sleep(200)
    }
  }
  /** Leaves `front` answering and healthy again (past its back-off), as the next tests expect. */
  const backToHealthy = async (front: RpcFront) => {
    front.mode = "pass"
    const deadline = Date.now() + 30_000
    while ((await endpoint(front)).state !== "healthy") {
      if (Date.now() > deadline) throw new Error(`${front.url} is not healthy again`)
      await sleep(300)
      node.advance(1)
      await poll()
    }
  }
  const blamesNoOne = async () => {
    for (const front of [a, b]) expect((await endpoint(front)).state).not.toBe("disagreeing")
    expect((await endpoint(a)).refusedTransfers ?? 0).toBe(0)
  }

  it("as the second endpoint: a dispute, the account's cursor stays below it, credited once the liar turns honest", async () => {
    node.advance(1)
    await pollUntilInUse(a)
    c.mode = "error"
    try {
      const invoice = await paidBehind(b)
      await poll()
      const stayed = await cursorSlot()
      for (let round = 0; round < 3; round++) {
        node.advance(40)
        await poll()
      }
      expect(await statusOf(invoice.id)).toBe("payment_detected")
      expect((await watcher()).awaitingCorroboration).toMatchObject({ payments: 1, disputed: 1 })
      expect(await cursorSlot()).toBe(stayed)
      await blamesNoOne()
      b.hideSignatures.length = 0
      await untilConfirmed(invoice.id)
      expect(await cursorSlot()).toBeGreaterThan(stayed)
      await blamesNoOne()
    } finally {
      b.hideSignatures.length = 0
      await backToHealthy(c)
    }
  })

  it("as the first endpoint: found by the re-read at depth from another endpoint, disputed, credited once the liar turns honest", async () => {
    node.advance(1)
    await pollUntilInUse(a)
    c.mode = "error"
    try {
      const invoice = await paidBehind(a)
      const listed = b.requests.filter((method) => method === "getSignaturesForAddress").length
      await poll()
      expect(await statusOf(invoice.id)).toBe("awaiting_payment")
      for (let round = 0; round < 4; round++) {
        node.advance(20)
        await poll()
      }
      expect(await statusOf(invoice.id)).toBe("payment_detected")
      expect((await watcher()).awaitingCorroboration).toMatchObject({ payments: 1, disputed: 1 })
      await blamesNoOne()
      // One page per account per depth window (32 slots), not per poll: five polls over 80 slots.
      expect(b.requests.filter((method) => method === "getSignaturesForAddress").length - listed).toBeLessThanOrEqual(2)
      a.hideSignatures.length = 0
      await untilConfirmed(invoice.id)
      await blamesNoOne()
    } finally {
      a.hideSignatures.length = 0
      await backToHealthy(c)
    }
  })
})

describe("a Solana watcher with several endpoints: corroborated transfers", () => {
  const withReference = async () => {
    const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 5 } })
    const option = (created.body.paymentOptions as ReadonlyArray<JsonBody>).find((candidate) => candidate.network === "solana")
    return { id: created.body.id as string, optionId: option.id as string, reference: option.optionPayload.reference as string }
  }
  const statusOf = async (id: string) => (await merchant.api(`/api/checkout/invoices/${id}`)).body.status
  /** A real payment to `payee`, and `liar` reporting a made-up twin of it paying `victim`, over four polls. */
  const liarReports = async (liar: RpcFront) => {
    const victim = await withReference()
    const payee = await withReference()
    const payer = newPayer()
    const prepared = await prepare(payee.id, payee.optionId, payer)
    const real = await sendPrepared(node, prepared.body.transaction, payer)
    // The made-up signature: the real transaction's, with the victim's reference instead of the payee's.
    const fake = Keypair.generate().publicKey.toBase58() + Keypair.generate().publicKey.toBase58().slice(0, 44)
    liar.inventSignatures.push({ account: "*", real, fake, from: payee.reference, to: victim.reference })
    for (let attempt = 0; attempt < 4; attempt++) await poll()
    liar.inventSignatures.length = 0
    return { victim, payee }
  }

  it("does not credit a transaction only the first-listed endpoint reports, credits the real one beside it, and marks it disagreeing", async () => {
    node.advance(1)
    await pollUntilInUse(a)
    const { victim, payee } = await liarReports(a)
    expect(await statusOf(victim.id)).toBe("awaiting_payment")
    expect(["payment_detected", "confirmed"]).toContain(await statusOf(payee.id))
    expect(await endpoint(a)).toMatchObject({ state: "disagreeing", inUse: false, refusedTransfers: 1 })
    expect(await (await fetch(`${app.baseUrl}/metrics`)).text()).toContain(
      `checkout_chain_endpoint_refused_transfers_total{network="solana",endpoint="${a.url}"} 1`
    )
  })

  it("does not credit a transfer invented by the endpoint that took over after a failover", async () => {
    a.mode = "error"
    node.advance(1)
    await poll()
    expect(await inUse()).toBe(b.url)
    const { victim, payee } = await liarReports(b)
    // One honest voice against the liar's: a dispute, detected at most, until the liar's own answers deny it.
    expect(await statusOf(victim.id)).not.toBe("confirmed")
    for (let attempt = 0; attempt < 3 && (await statusOf(victim.id)) !== "awaiting_payment"; attempt++) await poll()
    expect(await statusOf(victim.id)).toBe("awaiting_payment")
    expect(["payment_detected", "confirmed"]).toContain(await statusOf(payee.id))
    expect(await endpoint(b)).toMatchObject({ state: "disagreeing", inUse: false, refusedTransfers: 1 })
    expect(await inUse()).toBe(c.url)
    expect(await (await fetch(`${app.baseUrl}/metrics`)).text()).toContain(
      `checkout_chain_endpoint_refused_transfers_total{network="solana",endpoint="${b.url}"} 1`
    )
    a.mode = "pass"
  })
})
