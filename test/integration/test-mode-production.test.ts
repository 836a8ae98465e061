import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { verifyWebhookSignature } from "../../src/webhooks/Signature.ts"
import { WebhookDispatcher } from "../../src/webhooks/WebhookDispatcher.ts"
import { startTestApp, type TestApp } from "../support/TestApp.ts"
import { stablecoinOption, testKeyOf } from "../support/TestMode.ts"
import { newPath } from "../support/WebhookHarness.ts"
import { startWebhookReceiver, type WebhookReceiver } from "../support/WebhookReceiver.ts"

// Test mode works in production (issue #55): a started production service, a test key, the test
// helpers and the test webhook. Base is watched, and so is base sepolia (both watchers configured, not
// polling: role api); the receiver is on loopback, which production allows only when
// CHECKOUT_WEBHOOK_ALLOW_LOOPBACK says so.
let production: TestApp
let receiver: WebhookReceiver

beforeAll(async () => {
  receiver = await startWebhookReceiver()
  production = await startTestApp({ env: "production", webhookAllowLoopback: true }, {
    CHECKOUT_RPC_URL_BASE: "http://127.0.0.1:9",
    CHECKOUT_TEST_RPC_URL_BASE: "http://127.0.0.1:9"
  })
}, 120_000)
afterAll(async () => {
  await production?.close()
  await receiver?.close()
})

// Not the demo's public wallets, which production refuses: an account key of another seed.
const OWN_XPUB = "xpub6CtLkkSeokTNUDJRsb4eGs2kueNMkVF3hU6Gd283UNomYydu9H4zdicpGd6G7kQYeRKzJyWs5fzmnybrsj9hJHHXjYV28F7EtFS2D956mXz"

describe("test mode in production", () => {
  it("takes a test invoice to confirmed through the helpers, and the test webhook arrives signed with the test secret", async () => {
    const merchant = await production.createMerchant({ withSettings: false })
    const saved = await merchant.dashboard("/api/dashboard/checkout-settings", {
      method: "PUT",
      body: {
        issuedBy: "Shop",
        paymentTiming: { mode: "immediate", expiresAfterMinutes: 30 },
        paymentMethods: [{ network: "base", assetCode: "USDC", railType: "address_transfer", xpub: OWN_XPUB, isDefault: true }]
      }
    })
    expect(saved.status).toBe(200)
    const [livePath, testPath] = [newPath(), newPath()]
    for (const path of [livePath, testPath]) receiver.on(path, (response) => response.writeHead(200).end())
    const configure = async (path: string, query: string) => {
      expect((await merchant.dashboard(`/api/dashboard/webhook-settings${query}`, { method: "PUT", body: { url: receiver.url(path) } })).status).toBe(200)
      return (await merchant.dashboard(`/api/dashboard/webhook-settings/secret${query}`, { method: "POST" })).body.secret as string
    }
    const liveSecret = await configure(livePath, "")
    const testSecret = await configure(testPath, "?livemode=false")

    const { api } = await testKeyOf(production, merchant)
    const invoice = (await api("/api/checkout/invoices", { body: { amountUsd: 25 } })).body
    expect(invoice.livemode).toBe(false)
    const paid = await api(`/api/checkout/test-helpers/invoices/${invoice.id}/pay`, {
      body: { ...stablecoinOption(invoice), transactionHash: "test_order_1" }
    })
    expect(paid.body.invoice.status).toBe("payment_detected")
    const confirmed = await api(`/api/checkout/test-helpers/invoices/${invoice.id}/confirm`, { body: { transactionHash: "test_order_1", confirmations: 100 } })
    expect(confirmed.body.invoice).toMatchObject({ status: "confirmed", livemode: false })

    // A live key still gets 403 from the helpers in production.
    expect(await merchant.api(`/api/checkout/test-helpers/invoices/${invoice.id}/expire`, { body: {} })).toMatchObject({
      status: 403,
      body: { error: "Test helpers need a test API key" }
    })

    await production.run(Effect.flatMap(WebhookDispatcher, (dispatcher) => dispatcher.runOnce))
    const received = receiver.received(testPath)
    // Attempts run side by side: their order of arrival is not the events' order.
    expect(received.map((request) => JSON.parse(request.body).event).sort()).toEqual(["invoice_confirmed", "invoice_created", "invoice_payment_detected"])
    for (const request of received) {
      expect(JSON.parse(request.body)).toMatchObject({ livemode: false, invoice: { id: invoice.id, livemode: false } })
      expect(verifyWebhookSignature(request.body, String(request.headers["x-checkout-signature"]), testSecret)).toBe(true)
      expect(verifyWebhookSignature(request.body, String(request.headers["x-checkout-signature"]), liveSecret)).toBe(false)
    }
    expect(receiver.received(livePath)).toEqual([])
  })

  it("starts with a testnet watcher configured, and shows it apart from the live one", async () => {
    const merchant = await production.createMerchant({ withSettings: false })
    const { body } = await merchant.dashboard("/api/dashboard/chain-watchers")
    const base = body.watchers.filter((watcher: { network: string }) => watcher.network === "base")
    expect(base.map((watcher: { configured: boolean; livemode?: boolean }) => [watcher.configured, watcher.livemode])).toEqual([[true, undefined], [true, false]])
    expect(body.watchers.filter((watcher: { livemode?: boolean }) => watcher.livemode === false)).toHaveLength(1)
  })
})
