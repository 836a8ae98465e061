import { Effect, Exit, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ChainWatchers } from "../../src/chains/ChainWatchers.ts"
import { InvoiceExpiry } from "../../src/expiry/InvoiceExpiry.ts"
import { verifyWebhookSignature } from "../../src/webhooks/Signature.ts"
import { bitcoinMethod, pollWatcher, startChainApp } from "../support/ChainSuites.ts"
import { type EsploraSimulator, startEsploraSimulator } from "../support/EsploraSimulator.ts"
import type { TestApp, TestMerchant } from "../support/TestApp.ts"
import { webhookHarness } from "../support/WebhookHarness.ts"
import { startWebhookReceiver, type WebhookReceiver } from "../support/WebhookReceiver.ts"
import type { JsonBody } from "../support/Json.ts"

const REQUIRED = 3

let esplora: EsploraSimulator
let app: TestApp
let receiver: WebhookReceiver

const poll = () => pollWatcher(app, "bitcoin")
const sweep = () => app.run(Effect.flatMap(InvoiceExpiry, (expiry) => expiry.expire()))
const sql = <A>(run: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => app.run(Effect.flatMap(SqlClient.SqlClient, run))

const newMerchant = () =>
  app.createMerchant({
    methods: [bitcoinMethod()]
  })

const createInvoice = async (merchant: TestMerchant, amountUsd: number) => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd } })
  expect(created.status).toBe(201)
  const option = (created.body.paymentOptions as ReadonlyArray<JsonBody>).find((candidate) => candidate.network === "bitcoin")
  return {
    id: created.body.id as string,
    address: option.destinationAddress as string,
    sats: BigInt(Math.round(option.quotedAmount * 1e8))
  }
}

const detail = async (merchant: TestMerchant, id: string) => (await merchant.api(`/api/checkout/invoices/${id}`)).body
const valid = (body: JsonBody) => (body.payments as ReadonlyArray<JsonBody>).filter((payment) => payment.invalidatedAt === null)

const waitFor = async (what: string, condition: () => Promise<boolean>, timeoutMs = 15_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

// The mempool read per payable address, and by a diff of the mempool's txids (many open invoices).
describe.each([["per address", "1000"], ["by txid diff", "0"]])("the bitcoin watcher, mempool read %s", (_mode, mempoolAddressLimit) => {
  beforeAll(async () => {
    // Blocks a minute apart ending about now, so that block times are in the invoices' windows.
    esplora = await startEsploraSimulator({ genesisTime: Math.floor(Date.now() / 1000) - 600, blockSeconds: 1 })
    app = await startChainApp({}, {
      CHECKOUT_ESPLORA_URL: esplora.url,
      CHECKOUT_RPC_TIMEOUT_MS: "1000",
      CHECKOUT_CONFIRMATIONS_BITCOIN: String(REQUIRED),
      CHECKOUT_POLL_INTERVAL_MS_BITCOIN: "100",
      CHECKOUT_BITCOIN_MEMPOOL_ADDRESS_LIMIT: mempoolAddressLimit
    })
    receiver = await startWebhookReceiver()
    await poll()
  }, 120_000)

  afterAll(async () => {
    await app?.close()
    await receiver?.close()
    await esplora?.close()
  })

  it("detects a payment in the mempool, counts confirmations as blocks arrive, confirms and sends a signed webhook", async () => {
    const harness = webhookHarness(app)
    const merchant = await newMerchant()
    const secret = await harness.configure(merchant, receiver.url("/btc-confirmed"))
    receiver.on("/btc-confirmed", (response) => response.writeHead(200).end())
    const invoice = await createInvoice(merchant, 25)

    const before = Date.now()
    const txid = esplora.pay([{ address: invoice.address, sats: invoice.sats }])
    const report = await poll()
    expect(report.mempoolSeen).toBe(1)
    let body = await detail(merchant, invoice.id)
    expect(body.status).toBe("payment_detected")
    expect(body.confirmations).toBe(0)
    expect(body.lastTransactionHash).toBe(txid)
    expect(body.payments).toHaveLength(1)
    expect(body.payments[0]).toMatchObject({ network: "bitcoin", destinationAddress: invoice.address, confirmations: 0 })
    // The first sighting is the payment's chain time.
    const seenAt = Date.parse(body.payments[0].observedAt)
    expect(seenAt).toBeGreaterThanOrEqual(before - 1000)
    expect(seenAt).toBeLessThanOrEqual(Date.now())

    // A second poll of the same mempool changes nothing.
    await poll()
    expect((await detail(merchant, invoice.id)).payments).toHaveLength(1)

    esplora.mine(1)
    await poll()
    body = await detail(merchant, invoice.id)
    expect(body.status).toBe("payment_detected")
    expect(body.confirmations).toBe(1)
    expect(Date.parse(body.payments[0].observedAt)).toBe(seenAt)

    esplora.mine(REQUIRED - 1)
    await poll()
    body = await detail(merchant, invoice.id)
    expect(body.status).toBe("confirmed")
    expect(body.confirmations).toBe(REQUIRED)
    expect(body.receivedAmountUsd).toBe(25)

    await harness.runOnce()
    const confirmed = receiver.received("/btc-confirmed").find((request) => request.headers["x-checkout-event"] === "invoice_confirmed")
    expect(confirmed).toBeDefined()
    expect(verifyWebhookSignature(confirmed!.body, String(confirmed!.headers["x-checkout-signature"]), secret)).toBe(true)
    expect(JSON.parse(confirmed!.body).invoice.id).toBe(invoice.id)
  })

  it("adds up a partial payment and its top-up", async () => {
    const merchant = await newMerchant()
    const invoice = await createInvoice(merchant, 40)
    const half = invoice.sats / 2n
    esplora.pay([{ address: invoice.address, sats: half }])
    await poll()
    let body = await detail(merchant, invoice.id)
    expect(body.status).toBe("partially_paid")
    expect(body.receivedAmountUsd).toBeGreaterThan(0)
    expect(body.receivedAmountUsd).toBeLessThan(40)

    esplora.mine(1)
    await poll()
    esplora.pay([{ address: invoice.address, sats: invoice.sats - half }])
    await poll()
    body = await detail(merchant, invoice.id)
    expect(body.status).toBe("payment_detected")
    expect(body.receivedAmountUsd).toBe(40)

    esplora.mine(REQUIRED)
    await poll()
    body = await detail(merchant, invoice.id)
    expect(body.status).toBe("confirmed")
    expect(valid(body)).toHaveLength(2)
  })

  it("counts two outputs to the same address in one transaction as two payments", async () => {
    const merchant = await newMerchant()
    const invoice = await createInvoice(merchant, 30)
    const first = invoice.sats / 3n
    const txid = esplora.pay([{ address: invoice.address, sats: first }, { address: invoice.address, sats: invoice.sats - first }])
    await poll()
    let body = await detail(merchant, invoice.id)
    expect(body.status).toBe("payment_detected")
    expect(body.payments).toHaveLength(2)
    expect(new Set((body.payments as ReadonlyArray<JsonBody>).map((payment) => payment.transactionHash))).toEqual(new Set([txid]))

    esplora.mine(REQUIRED)
    await poll()
    body = await detail(merchant, invoice.id)
    expect(body.status).toBe("confirmed")
    expect(body.payments).toHaveLength(2)
    expect(body.receivedAmountUsd).toBe(30)
  })

  it("invalidates a transaction replaced by fee and counts its replacement once", async () => {
    const merchant = await newMerchant()
    const invoice = await createInvoice(merchant, 20)
    const original = esplora.pay([{ address: invoice.address, sats: invoice.sats }])
    await poll()
    expect((await detail(merchant, invoice.id)).status).toBe("payment_detected")

    const replacement = esplora.replace(original)
    const report = await poll()
    expect(report.invalidated).toBe(1)
    let body = await detail(merchant, invoice.id)
    expect(body.status).toBe("payment_detected")
    expect(body.receivedAmountUsd).toBe(20)
    const byHash = new Map((body.payments as ReadonlyArray<JsonBody>).map((payment) => [payment.transactionHash, payment]))
    expect(byHash.get(original)).toMatchObject({ invalidationReason: "replaced_or_dropped" })
    expect(byHash.get(replacement)).toMatchObject({ invalidatedAt: null, confirmations: 0 })

    esplora.mine(REQUIRED)
    await poll()
    body = await detail(merchant, invoice.id)
    expect(body.status).toBe("confirmed")
    expect(valid(body).map((payment) => payment.transactionHash)).toEqual([replacement])
  })

  it("invalidates a transaction that leaves the mempool without being mined", async () => {
    const merchant = await newMerchant()
    const invoice = await createInvoice(merchant, 15)
    const txid = esplora.pay([{ address: invoice.address, sats: invoice.sats }])
    await poll()
    expect((await detail(merchant, invoice.id)).status).toBe("payment_detected")

    esplora.drop(txid)
    await poll()
    const body = await detail(merchant, invoice.id)
    expect(body.status).toBe("awaiting_payment")
    expect(body.payments[0]).toMatchObject({ transactionHash: txid, invalidationReason: "replaced_or_dropped" })
  })

  it("rewinds a reorganisation of depth 2: orphaned evidence is invalidated, back in the mempool it counts again, once", async () => {
    const merchant = await newMerchant()
    const invoice = await createInvoice(merchant, 18)
    const txid = esplora.pay([{ address: invoice.address, sats: invoice.sats }])
    esplora.mine(2)
    await poll()
    let body = await detail(merchant, invoice.id)
    expect(body.status).toBe("payment_detected")
    expect(body.confirmations).toBe(2)

    // The two blocks are replaced by three without the payment, which waits in the mempool again.
    esplora.reorg(2, "mempool")
    const report = await poll()
    expect(report.invalidated).toBeGreaterThanOrEqual(1)
    body = await detail(merchant, invoice.id)
    expect(body.status).toBe("payment_detected")
    expect(body.confirmations).toBe(0)
    expect(body.payments).toHaveLength(1)
    expect(body.payments[0]).toMatchObject({ transactionHash: txid, invalidatedAt: null, confirmations: 0 })

    esplora.mine(REQUIRED)
    await poll()
    body = await detail(merchant, invoice.id)
    expect(body.status).toBe("confirmed")
    expect(body.payments).toHaveLength(1)
  })

  it("a reorganisation that drops the payment leaves the invoice unpaid", async () => {
    const merchant = await newMerchant()
    const invoice = await createInvoice(merchant, 11)
    const txid = esplora.pay([{ address: invoice.address, sats: invoice.sats }])
    esplora.mine(1)
    await poll()
    expect((await detail(merchant, invoice.id)).status).toBe("payment_detected")

    esplora.reorg(2, "drop")
    await poll()
    const body = await detail(merchant, invoice.id)
    expect(body.status).toBe("awaiting_payment")
    expect(body.payments[0]).toMatchObject({ transactionHash: txid, invalidationReason: "chain_reorganization" })
  })

  it("reads blocks through the JSON pages of 25 transactions when the API serves no raw blocks", async () => {
    const merchant = await newMerchant()
    const invoice = await createInvoice(merchant, 9)
    // Caught up first, so that the poll below reads the one new block.
    while ((await poll()).processedHeight < BigInt(esplora.tipHeight()));
    esplora.setRawBlocks(false)
    try {
      esplora.fill(40)
      // Mined without a mempool sighting: the payment is the 42nd transaction, on the second page.
      const txid = esplora.pay([{ address: invoice.address, sats: invoice.sats }])
      const [hash] = esplora.mine(1)
      const { tx_count } = await (await fetch(`${esplora.url}/block/${hash}`)).json()
      expect(tx_count).toBeGreaterThan(25)
      esplora.takeRequests()
      await poll()
      const pages = esplora.takeRequests().filter((path) => /^\/block\/[0-9a-f]+\/txs\/\d+$/.test(path))
      expect(pages, JSON.stringify({ pages, hash, tx_count })).toHaveLength(Math.ceil(tx_count / 25))
      const body = await detail(merchant, invoice.id)
      expect(body.status).toBe("payment_detected")
      expect(body.payments[0]).toMatchObject({ transactionHash: txid, confirmations: 1 })
    } finally {
      esplora.setRawBlocks(true)
    }
  })

  it("reads a block with the same requests whatever the number of open invoices", async () => {
    const merchant = await newMerchant()
    const blockRequests = async () => {
      while ((await poll()).processedHeight < BigInt(esplora.tipHeight()));
      esplora.mine(1)
      esplora.takeRequests()
      await poll()
      return esplora.takeRequests().filter((path) => path.startsWith("/block")).length
    }
    const few = await blockRequests()
    for (let i = 0; i < 20; i++) await createInvoice(merchant, 5)
    expect(await blockRequests()).toBe(few)
  })

  it("holds back the sweeper while the API is down, then resumes without loss or double count", async () => {
    const merchant = await newMerchant()
    const invoice = await createInvoice(merchant, 12)
    const unpaid = await createInvoice(merchant, 12)
    await poll()

    const workers = await Effect.runPromise(Scope.make())
    try {
      esplora.setDown(true)
      await app.run(Layer.buildWithScope(ChainWatchers.worker, workers))
      const txid = esplora.pay([{ address: invoice.address, sats: invoice.sats }])
      await waitFor("the watcher to record its failure", async () => {
        const rows = await sql((sql) => sql<{ lastError: string | null }>`SELECT last_error FROM chain_cursors WHERE network = 'bitcoin'`)
        return rows[0]?.lastError != null
      })
      // The deadline passes while nothing can be read: nothing expires on the strength of stale data.
      // It falls just after the chain time of the last successful read, and the clock passes it.
      const [{ chainTime }] = await sql((sql) => sql<{ chainTime: Date | string }>`SELECT chain_time FROM chain_cursors WHERE network = 'bitcoin'`)
      const deadline = new Date(new Date(chainTime).getTime() + 1)
      await waitFor("the clock to pass the deadline", async () => Date.now() > deadline.getTime())
      await sql((sql) => sql`UPDATE invoices SET payable_until_at = ${deadline} WHERE id IN (${invoice.id}, ${unpaid.id})`)
      expect(await sweep()).toBe(0)
      expect((await merchant.api(`/api/checkout/invoices/${invoice.id}/status`)).status).toBe(200)

      esplora.mine(1)
      esplora.setDown(false)
      await waitFor("the watcher to resume", async () => (await detail(merchant, invoice.id)).payments.length === 1)
      const body = await detail(merchant, invoice.id)
      expect(body.payments[0]).toMatchObject({ transactionHash: txid })
    } finally {
      await Effect.runPromise(Scope.close(workers, Exit.void))
    }
    await poll()
    await sweep()
    expect((await detail(merchant, unpaid.id)).status).toBe("expired")
    expect(valid(await detail(merchant, invoice.id))).toHaveLength(1)
  })
})
