import { existsSync } from "node:fs"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STRINGS } from "../../src/pay/Strings.ts"
import { axeViolations } from "../support/AxeCheck.ts"
import { publicRequest, startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import { testKeyOf } from "../support/TestMode.ts"

// Issue #55 item 6: the payer page of a test invoice says it is a test, and "Simulate payment"
// (full or partial) pays it through a public endpoint that exists only for test invoices.
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const available = existsSync(CHROMIUM)
if (!available) console.log(`pay-page-test-mode e2e: skipped, no browser at ${CHROMIUM} (apt-get install -y chromium)`)

const RATE_LIMIT = 8

let app: TestApp
let browser: Browser
let merchant: TestMerchant

let testKey: Awaited<ReturnType<typeof testKeyOf>> | undefined

/** An invoice of the merchant, made with its live key or with its test key (one, made at first use). */
const newInvoice = async (mode: "live" | "test") => {
  const body = { amountUsd: 20, productName: "Tea set" }
  testKey ??= await testKeyOf(app, merchant)
  const created = mode === "live" ? await merchant.api("/api/checkout/invoices", { body }) : await testKey.api("/api/checkout/invoices", { body })
  expect(created.status).toBe(201)
  expect(created.body.livemode).toBe(mode === "live")
  return created.body.id as string
}

const simulate = (id: string, body: Record<string, unknown>) =>
  publicRequest(app.baseUrl, `/api/checkout/pay/${id}/simulate-payment`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })

const open = async (path: string) => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: "en-US" })
  const page: Page = await context.newPage()
  const problems: Array<string> = []
  page.on("pageerror", (error) => problems.push(error.message))
  await page.goto(`${app.baseUrl}${path}`)
  return { context, page, problems }
}

describe.skipIf(!available)("the payer page of a test invoice", () => {
  beforeAll(async () => {
    app = await startTestApp({ solanaPrepareRateLimitPerMinute: RATE_LIMIT })
    merchant = await app.createMerchant()
    const { chromium } = await import("playwright-core")
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] })
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await app?.close()
  })

  it("says at the top, in words, that it is a test; simulating a partial then a full payment shows partially paid, then confirmed; axe finds nothing", async () => {
    const id = await newInvoice("test")
    const { context, page, problems } = await open(`/pay/${id}`)
    try {
      const banner = page.locator(".test-mode")
      await expect(banner.isVisible()).resolves.toBe(true)
      const text = (await banner.innerText()).toLowerCase()
      expect(text).toContain("test invoice")
      expect(text).toContain("do not send real funds")
      // At the top: above the summary's heading.
      const bannerBox = (await banner.boundingBox())!
      expect(bannerBox.y).toBeLessThan((await page.locator("h1").boundingBox())!.y)
      expect(await axeViolations(page)).toEqual([])

      await page.getByRole("button", { name: "Simulate partial payment" }).click()
      await page.locator(".status-partially_paid").waitFor({ timeout: 15_000 })
      expect(await page.locator(".status").innerText()).toContain(STRINGS.en.partiallyPaid)
      expect(await axeViolations(page)).toEqual([])

      await page.getByRole("button", { name: "Simulate payment", exact: true }).click()
      await page.locator(".status-confirmed").waitFor({ timeout: 15_000 })
      expect(await page.locator(".status").innerText()).toContain(STRINGS.en.confirmed)
      // Paid: the banner stays, the simulate buttons go.
      await expect(banner.isVisible()).resolves.toBe(true)
      expect(await page.locator("button[data-simulate]").count()).toBe(0)
      expect(await axeViolations(page)).toEqual([])
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }
  }, 120_000)

  it("says it in the page's language", async () => {
    const id = await newInvoice("test")
    const { context, page } = await open(`/pay/${id}?lang=de`)
    try {
      expect(await page.locator(".test-mode").innerText()).toContain(STRINGS.de.test.notice)
      expect(await page.getByRole("button", { name: STRINGS.de.test.simulate, exact: true }).count()).toBe(1)
    } finally {
      await context.close()
    }
  })

  it("shows no banner on a live invoice, whose simulate endpoint is not found", async () => {
    const id = await newInvoice("live")
    const { context, page } = await open(`/pay/${id}`)
    try {
      await page.locator(".status-awaiting_payment").waitFor()
      expect(await page.locator(".test-mode").count()).toBe(0)
      expect(await page.locator("button[data-simulate]").count()).toBe(0)
    } finally {
      await context.close()
    }
    const answer = await simulate(id, { kind: "full" })
    expect(answer).toMatchObject({ status: 404, body: { error: "Invoice not found" } })
    const detail = await merchant.api(`/api/checkout/invoices/${id}`)
    expect(detail.body.status).toBe("awaiting_payment")
    expect(detail.body.payments).toEqual([])
  })

  it("answers the public status; refuses a bad kind, another invoice's option and a paid invoice; is rate-limited per client like prepare", async () => {
    const id = await newInvoice("test")
    expect(await simulate(id, { kind: "most" })).toMatchObject({ status: 400 })
    expect(await simulate(id, { kind: "full", paymentOptionId: crypto.randomUUID() })).toMatchObject({
      status: 400,
      body: { error: "paymentOptionId is not an option of this invoice" }
    })
    const paid = await simulate(id, { kind: "full" })
    expect(paid.status).toBe(200)
    expect(paid.body).toMatchObject({ status: "confirmed", paymentCoverage: "exact_payment" })
    expect(await simulate(id, { kind: "full" })).toMatchObject({ status: 409, body: { error: "This invoice cannot be paid: it is confirmed" } })
    let limited: Awaited<ReturnType<typeof simulate>> | undefined
    for (let attempt = 0; attempt <= RATE_LIMIT && limited === undefined; attempt++) {
      const answer = await simulate(id, { kind: "full" })
      if (answer.status === 429) limited = answer
    }
    expect(limited?.body.error).toMatch(/^Rate limit exceeded\. Retry after \d+ seconds\.$/)
    expect(limited?.headers.get("retry-after")).toMatch(/^\d+$/)
  })
})
