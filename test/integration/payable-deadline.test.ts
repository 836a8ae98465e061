import { Keypair } from "@solana/web3.js"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEMO_KEYS } from "../../src/demo/DemoMerchant.ts"
import { solanaUsdcMethod, startChainApp, startSolanaWithMints } from "../support/ChainSuites.ts"
import type { SolanaNode } from "../support/SolanaRpc.ts"
import { publicRequest, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import type { JsonBody } from "../support/Json.ts"

/**
 * Payable means before payableUntilAt by the clock, not "not yet swept": between the deadline and
 * the sweeper's run (tests run no background workers, so the sweeper never runs here) the hosted
 * page shows the expired view and Solana preparation answers 409.
 */

const USDC = Keypair.generate().publicKey

let node: SolanaNode
let app: TestApp
let merchant: TestMerchant

beforeAll(async () => {
  node = await startSolanaWithMints(USDC)
  app = await startChainApp({ solanaPrepareRateLimitPerMinute: 1_000_000 }, {
    CHECKOUT_RPC_URL_SOLANA: node.url,
    CHECKOUT_TOKEN_SOLANA_USDC: USDC.toBase58()
  })
  merchant = await app.createMerchant({
    methods: [
      solanaUsdcMethod(),
      { network: "ethereum", assetCode: "USDC", railType: "address_transfer", enabled: true, isDefault: false, recipientAddress: null, xpub: DEMO_KEYS.evmXpub }
    ]
  })
}, 120_000)

afterAll(async () => {
  await app?.close()
  await node?.close()
})

const createInvoice = async () => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 5 } })
  expect(created.status).toBe(201)
  return { id: created.body.id as string, solana: (created.body.paymentOptions as ReadonlyArray<JsonBody>).find((option) => option.network === "solana") }
}

/** Moves the deadline one minute into the past without sweeping: the invoice is still stored as awaiting_payment. */
const passDeadline = (invoiceId: string) =>
  app.run(
    Effect.flatMap(SqlClient.SqlClient,
      (sql) => sql<{ payableUntilAt: Date }>`UPDATE invoices SET payable_until_at = now() - interval '1 minute' WHERE id = ${invoiceId} RETURNING payable_until_at`).pipe(
        Effect.map((rows) => new Date(rows[0].payableUntilAt))
      )
  )

const prepare = (invoiceId: string, paymentOptionId: string) =>
  publicRequest(app.baseUrl, `/api/checkout/pay/${invoiceId}/prepare-solana-wallet-payment`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ paymentOptionId, payerPublicKey: Keypair.generate().publicKey.toBase58() })
  })

describe("an invoice whose payableUntilAt has passed but which is not swept yet", () => {
  it("POST prepare-solana-wallet-payment answers 409 with the end of the payment window", async () => {
    const invoice = await createInvoice()
    expect((await prepare(invoice.id, invoice.solana.id)).status).toBe(200)
    const deadline = await passDeadline(invoice.id)
    const answer = await prepare(invoice.id, invoice.solana.id)
    expect(answer.status).toBe(409)
    expect(answer.body).toEqual({ error: `This invoice cannot be paid: its payment window ended at ${deadline.toISOString()}` })
    // still not swept: the stored status has not moved
    expect((await merchant.api(`/api/checkout/invoices/${invoice.id}`)).body.status).toBe("awaiting_payment")
  })

  it("its options are no longer active, in every view, while prepare answers 409 (one rule, #44 item 8)", async () => {
    const invoice = await createInvoice()
    const statusesOf = async () =>
      [
        (await merchant.api(`/api/checkout/invoices/${invoice.id}`)).body,
        (await merchant.api(`/api/checkout/invoices/${invoice.id}/status`)).body,
        (await publicRequest(app.baseUrl, `/api/checkout/pay/${invoice.id}`)).body,
        (await publicRequest(app.baseUrl, `/api/checkout/pay/${invoice.id}/status`)).body
      ].flatMap((answer) => (answer.paymentOptions as Array<{ status: string }>).map((option) => option.status))
    expect(new Set(await statusesOf())).toEqual(new Set(["active"]))
    expect((await prepare(invoice.id, invoice.solana.id)).status).toBe(200)
    await passDeadline(invoice.id)
    expect(new Set(await statusesOf())).toEqual(new Set(["inactive"]))
    expect((await prepare(invoice.id, invoice.solana.id)).status).toBe(409)
  })

  it("the hosted page serves the expired view: no address, no amount to send, no wallet button, no polling", async () => {
    const invoice = await createInvoice()
    const before = await publicRequest(app.baseUrl, `/pay/${invoice.id}`)
    expect(before.body).toContain(`id="option-${invoice.solana.id}"`)
    await passDeadline(invoice.id)
    const page = await publicRequest(app.baseUrl, `/pay/${invoice.id}`, { headers: { "accept-language": "en" } })
    expect(page.status).toBe(200)
    const html = String(page.body)
    expect(html).toContain(`data-status="expired"`)
    expect(html).toContain("This invoice has expired. Do not send a payment to it")
    expect(html).not.toContain(`class="option"`)
    expect(html).not.toContain(invoice.solana.destinationAddress)
    expect(html).not.toContain("data-pay=")
    expect((await merchant.api(`/api/checkout/invoices/${invoice.id}`)).body.status).toBe("awaiting_payment")
  })
})
