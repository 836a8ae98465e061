import { existsSync } from "node:fs"
import { type AddressInfo, createServer } from "node:net"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEMO_KEYS } from "../../src/demo/DemoMerchant.ts"
import { signWebhook } from "../../src/webhooks/Signature.ts"
import { privateDatabase } from "../support/PrivateDatabase.ts"
import { type ScriptProcess, scriptEnv, startScript } from "../support/ScriptProcess.ts"
import { startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"

// examples/shop (npm run example:shop) as a process, on the SDK, against the whole service with
// its webhook dispatcher: a buyer in Chromium buys, pays on the hosted page (the development
// simulator standing in for the chain) and comes back to an order the shop marked paid because a
// verified webhook made it fetch the invoice.
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const available = existsSync(CHROMIUM)
if (!available) console.log(`shop e2e: skipped, no browser at ${CHROMIUM} (apt-get install -y chromium)`)

let database: Awaited<ReturnType<typeof privateDatabase>>
let app: TestApp
let merchant: TestMerchant
let shop: ScriptProcess
let shopUrl: string
let browser: Browser

interface ShopOrder {
  readonly id: string
  readonly status: string
  readonly invoiceId: string
  readonly paidThrough: { event: string; delivery: string | null; invoiceStatus: string } | null
  readonly webhooks: ReadonlyArray<{ event: string; delivery: string | null; invoiceStatus: string }>
}
const shopOrder = async (id: string) => (await (await fetch(`${shopUrl}/orders/${id}.json`)).json()) as ShopOrder

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer().once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })

/** The shop's reads of the invoice that no earlier verified webhook about it accounts for (its output lines, in order). */
const readsWithoutWebhook = (output: string, invoiceId: string) => {
  let webhooks = 0
  let reads = 0
  const unexplained: Array<string> = []
  for (const line of output.split("\n")) {
    if (line.startsWith("webhook ") && line.includes("verified") && line.includes(`invoice ${invoiceId}`)) webhooks++
    if (line.startsWith(`checkout GET /api/checkout/invoices/${invoiceId}`) && ++reads > webhooks) unexplained.push(line)
  }
  return unexplained
}

/** Buys the first product in the shop and lands on the order's page, with its pay button. */
const buy = async (page: Page) => {
  await page.goto(shopUrl)
  await page.getByRole("button", { name: /^Buy Tea set/ }).click()
  await page.waitForURL(`${shopUrl}/orders/**`)
  const orderId = new URL(page.url()).pathname.split("/").pop()!
  const invoiceId = (await shopOrder(orderId)).invoiceId
  const invoice = (await merchant.api(`/api/checkout/invoices/${invoiceId}`)).body
  return { invoiceId, invoice, orderId }
}

describe.skipIf(!available)("the example shop (npm run example:shop)", () => {
  beforeAll(async () => {
    database = await privateDatabase()
    // The buyer follows the invoice's paymentUrl: the service's public URL must be where it listens.
    const port = await freePort()
    app = await startTestApp({ role: "all", webhookAllowLoopback: true, databaseUrl: database.url, port, publicUrl: `http://127.0.0.1:${port}` })
    merchant = await app.createMerchant({
      methods: [{ network: "ethereum", assetCode: "USDC", railType: "address_transfer", enabled: true, isDefault: true, recipientAddress: null, xpub: DEMO_KEYS.evmXpub }]
    })
    // As its README says: the signing secret from the dashboard's webhook settings, then the shop's URL there.
    const secret = (await merchant.dashboard("/api/dashboard/webhook-settings/secret", { method: "POST" })).body.secret as string
    shop = startScript("examples/shop/main.ts", [], scriptEnv({ CHECKOUT_URL: app.baseUrl, CHECKOUT_API_KEY: merchant.apiKey, CHECKOUT_WEBHOOK_SECRET: secret, SHOP_PORT: "0" }))
    const webhookUrl = (await shop.line(/^webhook URL: /)).replace(/^webhook URL: /, "")
    shopUrl = new URL(webhookUrl).origin
    const saved = await merchant.dashboard("/api/dashboard/webhook-settings", { method: "PUT", body: { url: webhookUrl } })
    expect(saved.status, JSON.stringify(saved.body)).toBe(200)
    // The shop's origin may frame the payment page (its pay button opens it in a modal).
    const settings = (await merchant.dashboard("/api/dashboard/checkout-settings")).body
    const embedding = await merchant.dashboard("/api/dashboard/checkout-settings", { method: "PUT", body: { ...settings, embedOrigins: [shopUrl] } })
    expect(embedding.status, JSON.stringify(embedding.body)).toBe(200)
    const { chromium } = await import("playwright-core")
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] })
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await shop?.stop()
    await app?.close()
    await database?.drop()
  })

  it("buy → the order page's button opens the payment page over it → paid on the simulator → live status, then paid through a verified webhook", async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const origins = new Set<string>()
    page.on("request", (request) => origins.add(new URL(request.url()).origin))

    const { invoiceId, invoice, orderId } = await buy(page)
    await page.getByRole("button", { name: "Pay with crypto" }).click()
    await page.getByText("Waiting for your payment").waitFor({ timeout: 30_000 })
    expect(invoice).toMatchObject({ amountUsd: 42.5, productName: "Tea set", redirectUrl: `${shopUrl}/orders/${orderId}` })
    // invoice_created reaches the shop, which fetches the invoice and keeps the order pending.
    let pending = await shopOrder(orderId)
    while (pending.webhooks.length === 0) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      pending = await shopOrder(orderId)
    }
    expect(pending).toMatchObject({ status: "awaiting_payment", invoiceId, paidThrough: null })
    expect(pending.webhooks[0]).toMatchObject({ event: "invoice_created", invoiceStatus: "awaiting_payment" })

    // The payer pays (the simulator feeds the evidence a chain watcher would) past the confirmations.
    const option = invoice.paymentOptions[0]
    const paid = await merchant.dashboard(`/api/dev/invoices/${invoiceId}/simulate-payment`, {
      body: { paymentOptionId: option.id, amount: String(option.quotedAmount), confirmations: 100 }
    })
    expect(paid.body.invoice?.status, JSON.stringify(paid.body)).toBe("confirmed")

    // The modal's page reported it live to the shop's page; closed, the order page reloads itself
    // from the shop until the webhook has marked it paid.
    await page.getByText("Payment confirmed.").waitFor({ timeout: 60_000 })
    await page.getByRole("button", { name: "Close the payment window" }).click()
    await page.locator(`[data-order-status="paid"]`).waitFor({ timeout: 60_000 })
    expect(await page.locator(".status").textContent()).toBe("Paid")
    // Whichever of the payment's events arrives first finds the invoice confirmed (delivery is unordered).
    const order = await shopOrder(orderId)
    expect(order.paidThrough).toMatchObject({ event: expect.stringMatching(/^invoice_(payment_detected|confirmed)$/), invoiceStatus: "confirmed" })
    expect(await page.locator(".paid-through").textContent()).toContain(`${order.paidThrough!.event} webhook`)
    expect(order.paidThrough!.delivery).toMatch(/^[0-9a-f-]{36}$/)
    // The shop read the invoice only after a verified webhook about it, never more often: no polling.
    expect(readsWithoutWebhook(shop.output(), invoiceId)).toEqual([])
    expect(shop.output()).not.toMatch(/\/status ->/)

    // Only the shop and the service were contacted.
    expect([...origins].sort()).toEqual([app.baseUrl, shopUrl].sort())
    await context.close()
  }, 180_000)

  it("refuses a webhook whose signature does not verify, and it changes no order", async () => {
    const page = await browser.newPage()
    const { invoiceId, orderId } = await buy(page)
    await page.close()
    const body = JSON.stringify({ event: "invoice_confirmed", invoice: { id: invoiceId, status: "confirmed" } })
    for (const signature of [signWebhook(body, "whsec_not_the_secret"), "0".repeat(64), "not hex"]) {
      const answer = await fetch(`${shopUrl}/webhooks/checkout`, { method: "POST", headers: { "content-type": "application/json", "x-checkout-signature": signature }, body })
      expect(answer.status).toBe(400)
    }
    expect(await shopOrder(orderId)).toMatchObject({ status: "awaiting_payment", paidThrough: null })
    expect(shop.output()).toContain("webhook refused: its signature does not verify")
  }, 120_000)
})
