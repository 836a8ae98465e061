import { existsSync } from "node:fs"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { publicRequest, startTestApp, type TestApp } from "../support/TestApp.ts"

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const available = existsSync(CHROMIUM)

let app: TestApp
let browser: Browser

describe.skipIf(!available)("the API docs page (/docs)", () => {
  beforeAll(async () => {
    app = await startTestApp()
    const { chromium } = await import("playwright-core")
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"] })
  }, 120_000)
  afterAll(async () => {
    await browser?.close()
    await app?.close()
  })

  it("loads nothing from outside the service, and its \"try it\" sends a create body the API accepts", { timeout: 90_000 }, async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    const outside: Array<string> = []
    await page.route("**/*", (route) => {
      if (route.request().url().startsWith(app.baseUrl)) return route.continue()
      outside.push(route.request().url())
      return route.abort()
    })
    const sent = new Promise<string>((resolve) =>
      page.on("request", (request) => {
        if (request.method() === "POST" && new URL(request.url()).pathname === "/api/checkout/invoices") resolve(request.postData() ?? "")
      })
    )
    await page.goto(`${app.baseUrl}/docs`)
    // The first operation is the create: its client's Send is the generated request as a user gets it.
    await page.getByRole("button", { name: /Test Request/i }).first().click()
    await page.getByRole("button", { name: /^Send/ }).first().click()
    const body = JSON.parse(await sent)
    expect(outside).toEqual([])

    const merchant = await app.createMerchant()
    const created = await publicRequest(app.baseUrl, "/api/checkout/invoices", {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": merchant.apiKey },
      body: JSON.stringify(body)
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    await page.close()
  })
})
