import { existsSync } from "node:fs"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const available = existsSync(CHROMIUM)
if (!available) console.log(`pay-page-live e2e: skipped, no browser at ${CHROMIUM} (apt-get install -y chromium)`)

let app: TestApp
let browser: Browser
let merchant: TestMerchant

const newInvoice = async () => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 20, productName: "Tea set" } })
  expect(created.status).toBe(201)
  return created.body as { id: string; paymentOptions: Array<{ id: string; isDefault: boolean }> }
}

const pay = async (invoice: Awaited<ReturnType<typeof newInvoice>>, amount: string) => {
  const option = invoice.paymentOptions.find((candidate) => candidate.isDefault) ?? invoice.paymentOptions[0]
  const paid = await merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-payment`, { body: { paymentOptionId: option.id, amount } })
  expect(paid.status, JSON.stringify(paid.body)).toBe(200)
}

/** The page with its status polls counted; `streamAnswer` replaces the event stream's answer (to refuse it). */
const openPage = async (invoiceId: string, streamAnswer?: number) => {
  const context = await browser.newContext({ viewport: { width: 390, height: 900 } })
  const page: Page = await context.newPage()
  const polls: Array<string> = []
  const problems: Array<string> = []
  page.on("pageerror", (error) => problems.push(error.message))
  await page.route("**/api/checkout/pay/*/status", (route) => {
    polls.push(route.request().url())
    return route.continue()
  })
  if (streamAnswer !== undefined) {
    await page.route("**/api/checkout/pay/*/events", (route) =>
      route.fulfill({ status: streamAnswer, contentType: "application/json", body: JSON.stringify({ error: "refused" }) }))
  }
  const stream = page.waitForResponse((response) => response.url().endsWith(`/api/checkout/pay/${invoiceId}/events`))
  await page.goto(`${app.baseUrl}/pay/${invoiceId}`)
  await stream
  return { context, page, polls, problems }
}

describe.skipIf(!available)("the payer page's live status", () => {
  beforeAll(async () => {
    // Twenty confirmations everywhere: the page must follow each of them in place.
    app = await startTestApp({}, Object.fromEntries(["ETHEREUM", "ARBITRUM", "BASE", "SOLANA", "BITCOIN"].map((network) => [`CHECKOUT_CONFIRMATIONS_${network}`, "20"])))
    merchant = await app.createMerchant()
    const { chromium } = await import("playwright-core")
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] })
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await app?.close()
  })

  it("updates from the event stream, with no status poll at all", async () => {
    const invoice = await newInvoice()
    const { context, page, polls, problems } = await openPage(invoice.id)
    try {
      await page.locator(".status-awaiting_payment").waitFor()
      await pay(invoice, "5")
      await page.locator(".status-partially_paid").waitFor({ timeout: 15_000 })
      await pay(invoice, "15")
      await page.locator(".status-payment_detected").waitFor({ timeout: 15_000 })
      expect(polls).toEqual([])
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }
  })

  it("follows 20 confirmations in place: one navigation in all, each count on screen, focus, scroll and the QR code kept, the change in an aria-live region", async () => {
    const invoice = await newInvoice()
    const option = invoice.paymentOptions.find((candidate) => candidate.isDefault) ?? invoice.paymentOptions[0]
    const { context, page, problems } = await openPage(invoice.id)
    // Documents loaded after the first one (a reload or replace would load one; history.replaceState,
    // which Playwright also reports as framenavigated, loads none and may or may not land before this).
    const reloads: Array<string> = []
    page.on("load", () => reloads.push(page.url()))
    try {
      const hash = `0x${"ab".repeat(32)}`
      const confirm = (confirmations: number) => merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-confirmations`, { body: { transactionHash: hash, confirmations } })
      // A partial payment first: the page keeps its option (and its QR code) while the payment confirms.
      const paid = await merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-payment`, {
        body: { paymentOptionId: option.id, amount: "5", confirmations: 0, transactionHash: hash }
      })
      expect(paid.status, JSON.stringify(paid.body)).toBe(200)
      await page.locator(".status-partially_paid").waitFor({ timeout: 15_000 })
      await page.evaluate(() => {
        const marked = window as unknown as { qr?: Element | null; focused?: Element | null }
        marked.qr = document.querySelector(".pay-options section.option:not([hidden]) figure.qr svg")
        const copy = document.querySelector<HTMLButtonElement>(".pay-options section.option:not([hidden]) button.copy")
        copy?.focus()
        marked.focused = copy
        window.scrollTo(0, 200)
      })
      const latencies: Array<number> = []
      for (let count = 1; count <= 20; count++) {
        const since = Date.now()
        expect((await confirm(count)).status).toBe(200)
        await expect.poll(() => page.locator(".transactions .tx-count, .transactions .tx-confirmed").first().textContent(), { timeout: 15_000 })
          .toMatch(count < 20 ? new RegExp(`^${count}$`) : /confirmed/)
        latencies.push(Date.now() - since)
      }
      const kept = await page.evaluate(() => {
        const marked = window as unknown as { qr?: Element | null; focused?: Element | null }
        return {
          qr: marked.qr !== null && marked.qr === document.querySelector(".pay-options section.option:not([hidden]) figure.qr svg"),
          focus: marked.focused !== null && document.activeElement === marked.focused,
          scroll: window.scrollY
        }
      })
      expect(kept).toEqual({ qr: true, focus: true, scroll: 200 })
      expect(await page.locator(".transactions").evaluate((list) => list.closest("[aria-live]") !== null)).toBe(true)
      expect(reloads, "no document load after the first").toEqual([])
      expect(problems).toEqual([])
      latencies.sort((a, b) => a - b)
      console.log(`pay page in place (PGlite): 20 confirmations, ${1 + reloads.length} document load, change to screen median ${latencies[10]} ms, max ${latencies[19]} ms`)
    } finally {
      await context.close()
    }
  }, 120_000)

  it("falls back to polling the status when the stream is refused", async () => {
    const invoice = await newInvoice()
    const { context, page, polls } = await openPage(invoice.id, 503)
    try {
      await pay(invoice, "5")
      await page.locator(".status-partially_paid").waitFor({ timeout: 15_000 })
      expect(polls.length).toBeGreaterThan(0)
    } finally {
      await context.close()
    }
  })
})
