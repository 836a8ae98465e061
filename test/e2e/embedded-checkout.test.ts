import { existsSync } from "node:fs"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { loadCheckoutScript } from "../../src/pay/CheckoutScript.ts"
import { axeViolations } from "../support/AxeCheck.ts"
import { type OriginServer, serveOrigin, shopPage } from "../support/ShopPages.ts"
import { startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const available = existsSync(CHROMIUM)
if (!available) console.log(`embedded-checkout e2e: skipped, no browser at ${CHROMIUM}`)

let app: TestApp
let browser: Browser
let merchant: TestMerchant
let shop: OriginServer
let strangerShop: OriginServer
let forger: OriginServer

const newInvoice = async () => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 20, productName: "Tea set" } })
  expect(created.status).toBe(201)
  return created.body as { id: string; paymentOptions: Array<{ id: string; isDefault: boolean }> }
}

/** The shop's page at `origin` with the button for a new invoice, in a browser context of its own. */
const openShop = async (origin: string, viewport = { width: 1280, height: 800 }, frame?: string, lang?: string) => {
  const invoice = await newInvoice()
  const context: BrowserContext = await browser.newContext({ viewport })
  const page: Page = await context.newPage()
  const problems: Array<string> = []
  const warnings: Array<string> = []
  page.on("pageerror", (error) => problems.push(error.message))
  page.on("console", (message) => message.type() === "warning" && warnings.push(message.text()))
  const query = new URLSearchParams({ pay: `${app.baseUrl}/pay/${invoice.id}`, ...(frame === undefined ? {} : { frame }), ...(lang === undefined ? {} : { lang }) })
  await page.goto(`${origin}/?${query}`)
  return { invoice, context, page, problems, warnings }
}

const seen = (page: Page) => page.evaluate(() => (window as unknown as { seen: Array<{ invoiceId: string; status: string }> }).seen.map((event) => event.status))

describe.skipIf(!available)("the embedded checkout (checkout.js)", () => {
  beforeAll(async () => {
    app = await startTestApp({}, { CHECKOUT_CONFIRMATIONS_ETHEREUM: "3", CHECKOUT_CONFIRMATIONS_BASE: "3", CHECKOUT_CONFIRMATIONS_ARBITRUM: "3" })
    merchant = await app.createMerchant()
    const script = await loadCheckoutScript()
    const page = shopPage({ src: `${app.baseUrl}/checkout.js?v=${script.version}`, integrity: script.integrity })
    shop = await serveOrigin(page)
    strangerShop = await serveOrigin(page)
    forger = await serveOrigin(() => `<!doctype html><html lang="en"><title>Advert</title><p>Advert</p></html>`)
    const settings = await merchant.dashboard("/api/dashboard/checkout-settings")
    const saved = await merchant.dashboard("/api/dashboard/checkout-settings", { method: "PUT", body: { ...settings.body, embedOrigins: [shop.origin] } })
    expect(saved.status, JSON.stringify(saved.body)).toBe(200)
    const { chromium } = await import("playwright-core")
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] })
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await Promise.all([shop, strangerShop, forger].map((server) => server?.close()))
    await app?.close()
  })

  it("opens the invoice over an allowed shop's page and reports payment_detected, then confirmed; a message forged by another frame is ignored", async () => {
    const { invoice, context, page, problems } = await openShop(shop.origin, undefined, `${forger.origin}/`)
    try {
      await page.getByRole("button", { name: "Pay with crypto" }).click()
      const dialog = page.getByRole("dialog", { name: "Payment" })
      await dialog.waitFor()
      await expect.poll(() => seen(page), { timeout: 15_000 }).toEqual(["awaiting_payment"])
      // Another frame on the shop's page posts the checkout's message shape: it must not count.
      const advert = page.frames().find((frame) => frame.url().startsWith(forger.origin))!
      await advert.evaluate((invoiceId) => {
        const forged = { source: "checkout-invoicing", type: "status", invoiceId, status: "confirmed" }
        window.parent.postMessage(forged, "*")
      }, invoice.id)
      const option = invoice.paymentOptions.find((candidate) => candidate.isDefault) ?? invoice.paymentOptions[0]
      const hash = `0x${"cd".repeat(32)}`
      const paid = await merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-payment`, {
        body: { paymentOptionId: option.id, amount: "20", confirmations: 1, transactionHash: hash }
      })
      expect(paid.status, JSON.stringify(paid.body)).toBe(200)
      await expect.poll(() => seen(page), { timeout: 15_000 }).toEqual(["awaiting_payment", "payment_detected"])
      // The payer is told how long confirmation takes, and that the page may be closed.
      const wait = page.frameLocator("iframe[title='Payment page']").locator(".detected-wait")
      await expect.poll(() => wait.textContent(), { timeout: 15_000 }).toMatch(/usually takes about \d+ min\. You may close this page/)
      const confirmed = await merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-confirmations`, { body: { transactionHash: hash, confirmations: 3 } })
      expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200)
      await expect.poll(() => seen(page), { timeout: 15_000 }).toEqual(["awaiting_payment", "payment_detected", "confirmed"])
      // Esc closes the modal, reports `closed`, and focus returns to the button.
      await page.keyboard.press("Escape")
      await expect.poll(() => seen(page)).toEqual(["awaiting_payment", "payment_detected", "confirmed", "closed"])
      expect(await page.evaluate(() => document.activeElement?.tagName)).toBe("CHECKOUT-INVOICING-BUTTON")
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }
  }, 60_000)

  it("a shop origin not allowed gets no framed page (frame-ancestors refuses it): the page opens in a new tab, and the console says why", async () => {
    const { invoice, context, page, warnings } = await openShop(strangerShop.origin)
    try {
      const tab = context.waitForEvent("page", { timeout: 20_000 })
      await page.getByRole("button", { name: "Pay with crypto" }).click()
      const opened = await tab
      await opened.waitForLoadState()
      // With the shop page's language (issue #57 item 5).
      expect(opened.url()).toBe(`${app.baseUrl}/pay/${invoice.id}?lang=en`)
      await expect.poll(() => page.getByRole("dialog").count()).toBe(0)
      expect(warnings.join("\n")).toContain("embedOrigins")
      expect(await seen(page)).toEqual([])
    } finally {
      await context.close()
    }
  }, 60_000)

  it("the page refuses framing by origin: frame-ancestors lists the merchant's origins, 'none' for a merchant without any", async () => {
    const invoice = await newInvoice()
    const answer = await fetch(`${app.baseUrl}/pay/${invoice.id}`)
    expect(answer.headers.get("content-security-policy")).toContain(`frame-ancestors ${shop.origin}`)
    const other = await app.createMerchant()
    const created = await other.api("/api/checkout/invoices", { body: { amountUsd: 5 } })
    const plain = await fetch(`${app.baseUrl}/pay/${created.body.id}`)
    expect(plain.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
  })

  it("a payer who keeps the page open after expired sees a late payment without reloading", async () => {
    const invoice = await newInvoice()
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } })
    const page = await context.newPage()
    try {
      const reloads: Array<string> = []
      await page.goto(`${app.baseUrl}/pay/${invoice.id}`)
      page.on("load", () => reloads.push(page.url()))
      const expired = await merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-expiry`, { body: {} })
      expect(expired.status).toBe(200)
      await page.getByText("This invoice has expired").first().waitFor({ timeout: 15_000 })
      const option = invoice.paymentOptions.find((candidate) => candidate.isDefault) ?? invoice.paymentOptions[0]
      const paid = await merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-payment`, { body: { paymentOptionId: option.id, amount: "20" } })
      expect(paid.status, JSON.stringify(paid.body)).toBe(200)
      await page.getByText("We received your payment, but it arrived after the deadline.").waitFor({ timeout: 15_000 })
      expect(reloads).toEqual([])
    } finally {
      await context.close()
    }
  }, 60_000)

  it("speaks the shop page's language: a German shop gets the modal and the page in the frame in German", async () => {
    const { context, page } = await openShop(shop.origin, undefined, undefined, "de")
    try {
      await page.getByRole("button", { name: "Pay with crypto" }).click()
      const dialog = page.getByRole("dialog", { name: "Zahlung" })
      await dialog.waitFor()
      await expect.poll(() => seen(page), { timeout: 15_000 }).toEqual(["awaiting_payment"])
      const frame = page.frames().find((candidate) => candidate.url().startsWith(`${app.baseUrl}/pay/`))!
      expect(new URL(frame.url()).searchParams.get("lang")).toBe("de")
      expect(await frame.evaluate(() => document.documentElement.lang)).toBe("de")
      expect(await page.getByRole("button", { name: "Zahlungsfenster schließen" }).isVisible()).toBe(true)
      expect(await axeViolations(page)).toEqual([])
    } finally {
      await context.close()
    }
  }, 60_000)

  for (const viewport of [{ width: 390, height: 844 }, { width: 1280, height: 800 }]) {
    it(`axe finds nothing in the open modal at ${viewport.width}×${viewport.height}; the close button closes it`, async () => {
      const { context, page } = await openShop(shop.origin, viewport)
      try {
        await page.getByRole("button", { name: "Pay with crypto" }).click()
        await expect.poll(() => seen(page), { timeout: 15_000 }).toEqual(["awaiting_payment"])
        expect(await axeViolations(page)).toEqual([])
        const box = await page.getByRole("dialog").boundingBox()
        if (viewport.width < 600) expect(box).toMatchObject({ x: 0, y: 0, width: viewport.width, height: viewport.height })
        await page.getByRole("button", { name: "Close the payment window" }).click()
        await expect.poll(() => page.getByRole("dialog").count()).toBe(0)
      } finally {
        await context.close()
      }
    }, 60_000)
  }
})
