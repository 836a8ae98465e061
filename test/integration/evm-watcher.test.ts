import { Effect, Exit, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { type Address, getAddress } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ChainWatchers } from "../../src/chains/ChainWatchers.ts"
import { DEMO_KEYS } from "../../src/demo/DemoMerchant.ts"
import { InvoiceExpiry } from "../../src/expiry/InvoiceExpiry.ts"
import { verifyWebhookSignature } from "../../src/webhooks/Signature.ts"
import { type AnvilNode, startAnvil, TEST_TOKENS } from "../support/Anvil.ts"
import { startChainApp } from "../support/ChainSuites.ts"
import type { TestApp, TestMerchant } from "../support/TestApp.ts"
import { webhookHarness } from "../support/WebhookHarness.ts"
import { startWebhookReceiver, type WebhookReceiver } from "../support/WebhookReceiver.ts"
import type { JsonBody } from "../support/Json.ts"

// The configured token contracts: the test token's code at fixed addresses on both nodes.
const { USDC, USDT } = TEST_TOKENS
const REQUIRED = 3

let ethereum: AnvilNode
let base: AnvilNode
let app: TestApp
let receiver: WebhookReceiver
let payer: Address

const poll = (network: string) => app.run(Effect.flatMap(ChainWatchers, (watchers) => watchers.poll(network)))
const sweep = () => app.run(Effect.flatMap(InvoiceExpiry, (expiry) => expiry.expire()))
const sql = <A>(run: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => app.run(Effect.flatMap(SqlClient.SqlClient, run))

/** A merchant taking USDC on ethereum to a derived deposit address and to a forwarder contract. */
const newMerchant = () =>
  app.createMerchant({
    methods: [
      { network: "ethereum", assetCode: "USDC", railType: "address_transfer", enabled: true, isDefault: true, recipientAddress: null, xpub: DEMO_KEYS.evmXpub },
      { network: "ethereum", assetCode: "USDC", railType: "wallet_contract", enabled: true, isDefault: false, recipientAddress: DEMO_KEYS.evmRecipient, xpub: null }
    ]
  })

const createInvoice = async (merchant: TestMerchant, amountUsd: number) => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd } })
  expect(created.status).toBe(201)
  const options = created.body.paymentOptions as ReadonlyArray<JsonBody>
  const deposit = options.find((option) => option.railType === "address_transfer")
  const forwarder = options.find((option) => option.railType === "wallet_contract")
  return {
    id: created.body.id as string,
    depositAddress: getAddress(deposit.destinationAddress),
    forwarderAddress: getAddress(forwarder.optionPayload.contractAddress)
  }
}

const detail = async (merchant: TestMerchant, id: string) => (await merchant.api(`/api/checkout/invoices/${id}`)).body

const waitFor = async (what: string, condition: () => Promise<boolean>, timeoutMs = 15_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const cursorOf = async (network: string) => {
  const rows = await sql((sql) =>
    sql<{ processedHeight: string | null; lastError: string | null }>`
      SELECT processed_height::text AS processed_height, last_error FROM chain_cursors WHERE network = ${network}`
  )
  return rows[0]
}

const usdc = (amount: number) => BigInt(Math.round(amount * 1_000_000))

beforeAll(async () => {
  // Ethereum's blocks an hour in the past, so that a deadline can fall between two of them.
  const anHourAgo = BigInt(Math.floor(Date.now() / 1000) - 3600)
  ;[ethereum, base] = await Promise.all([startAnvil({ chainId: 1, genesisTimestamp: anHourAgo }), startAnvil({ chainId: 8453 })])
  for (const node of [ethereum, base]) {
    await node.installToken(USDC)
    await node.installToken(USDT)
  }
  payer = ethereum.accounts[1]
  for (const node of [ethereum, base]) {
    await node.mint(USDC, payer, usdc(1_000_000))
    await node.mint(USDT, payer, usdc(1_000_000))
  }
  app = await startChainApp({}, {
    CHECKOUT_RPC_URL_ETHEREUM: ethereum.rpcUrl,
    CHECKOUT_RPC_URL_BASE: base.rpcUrl,
    CHECKOUT_RPC_TIMEOUT_MS: "1000",
    CHECKOUT_TOKEN_ETHEREUM_USDC: USDC,
    CHECKOUT_TOKEN_ETHEREUM_USDT: USDT,
    CHECKOUT_TOKEN_BASE_USDC: USDC,
    CHECKOUT_CONFIRMATIONS_ETHEREUM: String(REQUIRED),
    CHECKOUT_CONFIRMATIONS_BASE: String(REQUIRED),
    CHECKOUT_POLL_INTERVAL_MS_ETHEREUM: "100",
    CHECKOUT_POLL_INTERVAL_MS_BASE: "100"
  })
  receiver = await startWebhookReceiver()
  // The first poll of each network sets its cursor.
  await poll("ethereum")
  await poll("base")
}, 120_000)

afterAll(async () => {
  await app?.close()
  await receiver?.close()
  await Promise.all([ethereum?.stop(), base?.stop()])
})

describe("the EVM watcher", () => {
  it("sees a transfer, counts confirmations as blocks arrive, confirms and sends a signed webhook", async () => {
    const harness = webhookHarness(app)
    const merchant = await newMerchant()
    const secret = await harness.configure(merchant, receiver.url("/evm-confirmed"))
    receiver.on("/evm-confirmed", (response) => response.writeHead(200).end())
    const invoice = await createInvoice(merchant, 12.5)

    const sent = await ethereum.transfer(USDC, payer, invoice.depositAddress, usdc(12.5))
    const report = await poll("ethereum")
    expect(report.evidence).toBe(1)
    let body = await detail(merchant, invoice.id)
    expect(body.status).toBe("payment_detected")
    expect(body.confirmations).toBe(1)
    expect(body.lastTransactionHash).toBe(sent.hash.toLowerCase())
    expect(body.payments).toHaveLength(1)
    expect(body.payments[0]).toMatchObject({ network: "ethereum", amountReceived: 12.5, confirmations: 1, confirmedAt: null })
    // Who paid (issue #52): the Transfer's `from`, what a signed refund request is checked against.
    const payers = await sql((sql) => sql<{ payerAddress: string }>`SELECT payer_address FROM payments WHERE invoice_id = ${invoice.id}`)
    expect(payers.map((row) => row.payerAddress.toLowerCase())).toEqual([payer.toLowerCase()])

    await ethereum.mine(1)
    await poll("ethereum")
    body = await detail(merchant, invoice.id)
    expect(body.status).toBe("payment_detected")
    expect(body.confirmations).toBe(2)

    await ethereum.mine(1)
    await poll("ethereum")
    body = await detail(merchant, invoice.id)
    expect(body.status).toBe("confirmed")
    expect(body.confirmations).toBe(REQUIRED)
    // The block's time is the payment's chain time.
    const block = await ethereum.publicClient.getBlock({ blockNumber: sent.blockNumber })
    expect(Date.parse(body.payments[0].observedAt)).toBe(Number(block.timestamp) * 1000)

    await harness.runOnce()
    const confirmed = receiver.received("/evm-confirmed").find((request) => request.headers["x-checkout-event"] === "invoice_confirmed")
    expect(confirmed).toBeDefined()
    expect(verifyWebhookSignature(confirmed!.body, String(confirmed!.headers["x-checkout-signature"]), secret)).toBe(true)
    expect(JSON.parse(confirmed!.body).invoice.id).toBe(invoice.id)
  })

  it("adds up two partial transfers to a forwarder address: partially paid, then sufficient", async () => {
    const merchant = await newMerchant()
    const invoice = await createInvoice(merchant, 10)
    await ethereum.transfer(USDC, payer, invoice.forwarderAddress, usdc(4))
    await poll("ethereum")
    let body = await detail(merchant, invoice.id)
    expect(body.status).toBe("partially_paid")
    expect(body.receivedAmountUsd).toBe(4)

    await ethereum.transfer(USDC, payer, invoice.forwarderAddress, usdc(6))
    await poll("ethereum")
    body = await detail(merchant, invoice.id)
    expect(body.status).toBe("payment_detected")
    expect(body.receivedAmountUsd).toBe(10)
    expect(body.payments).toHaveLength(2)
  })

  it("invalidates a transfer whose block is reorganised away, and counts it once when it is mined again", async () => {
    const merchant = await newMerchant()
    const invoice = await createInvoice(merchant, 7)
    const sent = await ethereum.transfer(USDC, payer, invoice.depositAddress, usdc(7))
    await poll("ethereum")
    expect((await detail(merchant, invoice.id)).status).toBe("payment_detected")

    await ethereum.reorg(1)
    const afterReorg = await poll("ethereum")
    expect(afterReorg.invalidated).toBeGreaterThanOrEqual(1)
    let body = await detail(merchant, invoice.id)
    expect(body.status).toBe("awaiting_payment")
    expect(body.receivedAmountUsd).toBe(0)
    expect(body.payments[0]).toMatchObject({ invalidationReason: "chain_reorganization" })
    expect(body.payments[0].invalidatedAt).not.toBeNull()

    // The same transaction, re-mined in the new branch.
    await ethereum.reorg(1, [sent.hash])
    await poll("ethereum")
    body = await detail(merchant, invoice.id)
    expect(body.status).toBe("payment_detected")
    expect(body.receivedAmountUsd).toBe(7)
    const valid = (body.payments as ReadonlyArray<JsonBody>).filter((payment) => payment.invalidatedAt === null)
    expect(valid).toHaveLength(1)
    expect(valid[0].transactionHash).toBe(sent.hash.toLowerCase())
  })

  it("records a wrong token and a wrong network as unmatched deposits, without moving the invoice", async () => {
    const merchant = await newMerchant()
    const invoice = await createInvoice(merchant, 5)
    const wrongToken = await ethereum.transfer(USDT, payer, invoice.depositAddress, usdc(5))
    const wrongNetwork = await base.transfer(USDC, base.accounts[1], invoice.depositAddress, usdc(5))
    expect((await poll("ethereum")).unmatched).toBe(1)
    expect((await poll("base")).unmatched).toBe(1)

    const body = await detail(merchant, invoice.id)
    expect(body.status).toBe("awaiting_payment")
    expect(body.payments).toHaveLength(0)
    const rows = await sql((sql) =>
      sql<{ network: string; assetCode: string; reason: string; transactionHash: string; amountAtomic: string }>`
        SELECT network, asset_code, reason, transaction_hash, amount_atomic::text AS amount_atomic
        FROM unmatched_deposits WHERE invoice_id = ${invoice.id} ORDER BY network`
    )
    expect(rows).toEqual([
      { network: "base", assetCode: "USDC", reason: "wrong_network", transactionHash: wrongNetwork.hash.toLowerCase(), amountAtomic: "5000000" },
      { network: "ethereum", assetCode: "USDT", reason: "wrong_token", transactionHash: wrongToken.hash.toLowerCase(), amountAtomic: "5000000" }
    ])
  })

  it("counts a transfer mined before the deadline as on time when it is processed after it, and the sweeper waits for the watcher", async () => {
    const merchant = await newMerchant()
    const paid = await createInvoice(merchant, 3)
    const unpaid = await createInvoice(merchant, 3)
    await poll("ethereum")
    const processedUpTo = (await ethereum.publicClient.getBlock({ blockTag: "latest" })).timestamp
    await ethereum.setNextBlockTimestamp(processedUpTo + 10n)
    await ethereum.transfer(USDC, payer, paid.depositAddress, usdc(3))
    // Both deadlines at the transfer's block time (in the past): after what the watcher has processed.
    const deadline = new Date(Number(processedUpTo + 10n) * 1000)
    await sql((sql) => sql`UPDATE invoices SET payable_until_at = ${deadline} WHERE id IN (${paid.id}, ${unpaid.id})`)

    expect(await sweep()).toBe(0)
    expect((await detail(merchant, unpaid.id)).status).toBe("awaiting_payment")

    await poll("ethereum")
    const body = await detail(merchant, paid.id)
    expect(body.status).toBe("payment_detected")
    expect(body.exceptionType).toBeNull()

    // Processed up to the deadline: the unpaid invoice may now expire, the paid one waits for confirmations.
    await sweep()
    expect((await detail(merchant, unpaid.id)).status).toBe("expired")
    expect((await detail(merchant, paid.id)).status).toBe("payment_detected")
  })

  it("keeps other networks and the API going while a node is down, and resumes from its cursor without loss or double count", async () => {
    const merchant = await newMerchant()
    const invoice = await createInvoice(merchant, 12)
    await ethereum.transfer(USDC, payer, invoice.depositAddress, usdc(5))
    await poll("ethereum")
    expect((await detail(merchant, invoice.id)).status).toBe("partially_paid")

    // The background loops, as the workers role runs them.
    const workers = await Effect.runPromise(Scope.make())
    try {
      await app.run(Layer.buildWithScope(ChainWatchers.worker, workers))
      // A transfer the watcher has not processed yet when its node dies.
      await ethereum.transfer(USDC, payer, invoice.depositAddress, usdc(7))
      const state = await ethereum.dumpState()
      await ethereum.kill()
      await waitFor("the ethereum watcher to record its failure", async () => (await cursorOf("ethereum"))?.lastError != null)

      const baseBefore = BigInt((await cursorOf("base"))!.processedHeight!)
      await base.mine(2)
      await waitFor("the base watcher to go on", async () => BigInt((await cursorOf("base"))!.processedHeight!) >= baseBefore + 2n)
      expect((await merchant.api(`/api/checkout/invoices/${invoice.id}/status`)).status).toBe(200)

      ethereum = await startAnvil({ chainId: 1, port: ethereum.port, loadState: state })
      await waitFor("the ethereum watcher to resume", async () => (await detail(merchant, invoice.id)).status === "payment_detected")
      await waitFor("the error to clear", async () => (await cursorOf("ethereum"))?.lastError === null)
    } finally {
      await Effect.runPromise(Scope.close(workers, Exit.void))
    }
    const body = await detail(merchant, invoice.id)
    expect(body.receivedAmountUsd).toBe(12)
    expect((body.payments as ReadonlyArray<JsonBody>).filter((payment) => payment.invalidatedAt === null)).toHaveLength(2)
  })
})
