import { existsSync } from "node:fs"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { axeViolations } from "../support/AxeCheck.ts"
import { publicRequest, startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import { testKeyOf } from "../support/TestMode.ts"
import { signedInPage, SIZES, type Size } from "./DashboardScenes.ts"

// Issue #55: the dashboard's switch "Viewing test data" and the banner that says so in words,
// kept across views and reloads, and the keys view's test keys, in Chromium, with axe.

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"

let app: TestApp
let browser: Browser
let merchant: TestMerchant

/** An invoice made with the merchant's live key, or with a test key (a test invoice). */
const create = async (merchantReference: string, livemode: boolean) => {
  const body = { amountUsd: 10, merchantReference, productName: merchantReference }
  const created = livemode ? await merchant.api("/api/checkout/invoices", { body }) : await (await testKeyOf(app, merchant)).api("/api/checkout/invoices", { body })
  expect(created.status).toBe(201)
  expect(created.body.livemode).toBe(livemode)
  return created.body.id as string
}

const modeSwitch = (page: Page) => page.getByRole("switch", { name: "Viewing test data" })
const banner = (page: Page) => page.locator("#test-banner")
const invoiceRows = (page: Page) => page.locator("tr[data-invoice]").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-invoice")))

describe.skipIf(!existsSync(CHROMIUM))("the dashboard's test data switch", () => {
  beforeAll(async () => {
    app = await startTestApp()
    merchant = await app.createMerchant()
    const { chromium } = await import("playwright-core")
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"] })
  }, 300_000)

  afterAll(async () => {
    await browser?.close()
    await app?.close()
  })

  it("shows live data until switched, then test data only under a banner in words, across views and reloads", async () => {
    const live = await create("LIVE-A", true)
    const test = await create("TEST-A", false)
    const { context, page, problems } = await signedInPage(browser, app, merchant, "desktop")
    await page.goto(`${app.baseUrl}/dashboard#/invoices`)
    await page.locator(`tr[data-invoice="${live}"]`).waitFor()
    expect(await invoiceRows(page)).toEqual([live])
    expect(await modeSwitch(page).isChecked()).toBe(false)
    expect(await banner(page).isVisible()).toBe(false)

    await modeSwitch(page).check()
    await page.locator(`tr[data-invoice="${test}"]`).waitFor()
    expect(await invoiceRows(page)).toEqual([test])
    expect(await banner(page).isVisible()).toBe(true)
    expect(await banner(page).textContent()).toMatch(/^Test data\. You are viewing test mode: .*Nothing here is real money/)
    expect(await page.getByRole("link", { name: "Export CSV" }).getAttribute("href")).toContain("livemode=false")
    // "New invoice" would make a live invoice: the test view points to test keys instead.
    expect(await page.getByRole("link", { name: "New invoice" }).count()).toBe(0)
    await page.getByText("Test invoices are created with a test API key").waitFor()
    expect(await axeViolations(page)).toEqual([])

    // Another view, and a reload: still test data, still said so.
    await page.goto(`${app.baseUrl}/dashboard#/exceptions`)
    await page.getByRole("heading", { name: "Exceptions to review" }).waitFor()
    expect(await modeSwitch(page).isChecked()).toBe(true)
    expect(await banner(page).isVisible()).toBe(true)
    await page.reload()
    await page.goto(`${app.baseUrl}/dashboard#/invoices`)
    await page.locator(`tr[data-invoice="${test}"]`).waitFor()
    expect(await invoiceRows(page)).toEqual([test])
    expect(await banner(page).isVisible()).toBe(true)

    // The settings view says where test invoices' methods come from until test settings are saved.
    await page.goto(`${app.baseUrl}/dashboard#/settings`)
    await page.getByRole("heading", { name: "Checkout settings (test mode)" }).waitFor()
    await page.getByText("Test mode uses your live settings until you save test settings here").waitFor()
    expect(await axeViolations(page)).toEqual([])

    await page.goto(`${app.baseUrl}/dashboard#/invoices`)
    await modeSwitch(page).uncheck()
    await page.locator(`tr[data-invoice="${live}"]`).waitFor()
    expect(await invoiceRows(page)).toEqual([live])
    expect(await banner(page).isVisible()).toBe(false)
    expect(problems).toEqual([])
    await context.close()
  })

  it("creates a test key in the keys view, listed with mode Test and prefix svc_test_, within the test keys' own limit of 3", async () => {
    const keyMerchant = await app.createMerchant()
    const { context, page, problems } = await signedInPage(browser, app, keyMerchant, "desktop")
    const modeSelect = page.getByRole("combobox", { name: /^Mode/ })
    const rows = () =>
      page.locator("tr[data-key]").evaluateAll((found) =>
        found.map((row) => [
          row.querySelector("td[data-label='Mode']")!.textContent,
          row.querySelector("td.title")!.textContent!.slice(0, 9)
        ])
      )
    await page.goto(`${app.baseUrl}/dashboard#/keys`)
    await page.getByRole("heading", { name: "API keys" }).waitFor()
    await page.getByText("Live and test keys each have their own limit of 3 active keys").waitFor()
    // Live data shown: a new key is live unless test is picked; the fixture's own key is listed as Live.
    expect(await modeSelect.inputValue()).toBe("live")
    expect(await rows()).toEqual([["Live", "svc_live_"]])

    // Switched to test data: test is preselected.
    await modeSwitch(page).check()
    // The view is drawn again (the old one is there meanwhile, with "live" chosen).
    await page.waitForFunction(() => document.querySelector<HTMLSelectElement>("select[name='mode']")?.value === "test")
    expect(await modeSelect.inputValue()).toBe("test")
    await page.getByLabel("Label").fill("Staging shop")
    await page.getByRole("button", { name: "Create API key" }).click()
    const rawKey = (await page.locator("#new-key").textContent())!
    expect(rawKey).toMatch(/^svc_test_/)
    await page.getByText("Your new test key").waitFor()
    const testRow = page.locator("tr[data-key]").filter({ hasText: "Staging shop" })
    expect(await testRow.locator("td[data-label='Mode']").textContent()).toBe("Test")
    expect(await testRow.locator("td.title").textContent()).toBe(`${rawKey.slice(0, 12)}…`)
    expect(await axeViolations(page)).toEqual([])

    // The key works, and makes test invoices.
    const created = await publicRequest(app.baseUrl, "/api/checkout/invoices", {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": rawKey },
      body: JSON.stringify({ amountUsd: 5 })
    })
    expect(created.status).toBe(201)
    expect(created.body.livemode).toBe(false)

    // Two more test keys, then the fourth is refused with the test keys' own message; a live key can still be made.
    for (const label of ["Test 2", "Test 3"]) {
      await page.getByLabel("Label").fill(label)
      await page.getByRole("button", { name: "Create API key" }).click()
      await page.locator("tr[data-key]").filter({ hasText: label }).waitFor()
    }
    await page.getByLabel("Label").fill("Test 4")
    await page.getByRole("button", { name: "Create API key" }).click()
    await page.getByRole("alert").filter({ hasText: "At most 3 active test API keys" }).waitFor()
    await modeSelect.selectOption("live")
    await page.getByLabel("Label").fill("Second live")
    await page.getByRole("button", { name: "Create API key" }).click()
    await page.getByText("Your new live key").waitFor()
    expect(await page.locator("#new-key").textContent()).toMatch(/^svc_live_/)
    expect((await rows()).map(([mode]) => mode).sort()).toEqual(["Live", "Live", "Test", "Test", "Test"])
    expect(await axeViolations(page)).toEqual([])
    // The refused fourth test key is the one failed request (the browser logs it).
    expect(problems).toEqual(["console: Failed to load resource: the server responded with a status of 409 (Conflict)"])
    await context.close()
  })

  for (const size of Object.keys(SIZES) as Array<Size>) {
    it(`shows the switch and the banner without an axe violation at ${size} size`, async () => {
      const { context, page, problems } = await signedInPage(browser, app, merchant, size)
      await context.addInitScript(() => localStorage.setItem("checkout.viewingTestData", "true"))
      await page.goto(`${app.baseUrl}/dashboard#/overview`)
      await page.getByRole("heading", { name: "Overview" }).waitFor()
      expect(await modeSwitch(page).isVisible()).toBe(true)
      expect(await modeSwitch(page).isChecked()).toBe(true)
      expect(await banner(page).isVisible()).toBe(true)
      expect(await axeViolations(page)).toEqual([])
      expect(problems).toEqual([])
      await context.close()
    })
  }
})
