import { existsSync } from "node:fs"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EVENT_WORDS } from "../../src/dashboard/Words.ts"
import { DEFAULT_EXPLORERS } from "../../src/pay/Explorers.ts"
import { startTestApp, type TestApp } from "../support/TestApp.ts"
import { makeScenes, type Scenes, signedInPage } from "./DashboardScenes.ts"

/**
 * Issue #47 item 6: the dashboard offers only what the server accepts and says things in words:
 * close actions from the API, the timeline in words, explorer links, the folded statechart, the
 * variable that turns a watcher on, "New invoice", and the overview as the landing view.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const available = existsSync(CHROMIUM)

let app: TestApp
let browser: Browser
let scenes: Scenes

const ACTIONS = ["accept_late_payment", "mark_paid_out_of_band", "close_unpaid"] as const

describe.skipIf(!available)("the dashboard offers what the server accepts, in words", () => {
  beforeAll(async () => {
    app = await startTestApp()
    scenes = await makeScenes(app)
    const { chromium } = await import("playwright-core")
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"] })
  }, 180_000)

  afterAll(async () => {
    await browser?.close()
    await app?.close()
  })

  it("lists for each open exception exactly the close actions the server accepts, and the form offers only those", async () => {
    for (const id of [scenes.openException, scenes.partialException]) {
      const detail = await scenes.merchant.dashboard(`/api/dashboard/invoices/${id}`)
      const offered: ReadonlyArray<string> = detail.body.closeActions
      // Each action not offered is refused; each offered one is accepted (tried on a copy of the state: the last one closes it).
      for (const action of ACTIONS.filter((candidate) => !offered.includes(candidate))) {
        const refused = await scenes.merchant.dashboard(`/api/dashboard/invoices/${id}/exception/close`, { body: { action, note: "try" } })
        expect(refused.status, `${id} ${action}`).toBe(409)
      }
      const listed = await scenes.merchant.dashboard("/api/dashboard/invoices?exceptionStatus=open")
      expect(listed.body.invoices.find((invoice: { id: string }) => invoice.id === id).closeActions).toEqual(offered)
    }
    const late = await scenes.merchant.dashboard(`/api/dashboard/invoices/${scenes.openException}`)
    expect(late.body.closeActions).toEqual(["accept_late_payment", "mark_paid_out_of_band", "close_unpaid"])
    const paid = await scenes.merchant.dashboard(`/api/dashboard/invoices/${scenes.paid}`)
    expect(paid.body.closeActions).toEqual([])

    const { context, page, problems } = await signedInPage(browser, app, scenes.merchant, "phone")
    await page.goto(`${app.baseUrl}/dashboard#/invoices/${scenes.partialException}`)
    const select = page.getByLabel("Close with")
    await select.waitFor()
    expect(await select.locator("option").evaluateAll((options) => options.map((option) => (option as HTMLOptionElement).value)))
      .toEqual(["", "mark_paid_out_of_band", "close_unpaid"])
    // Nothing is chosen for the merchant: submitting without a choice is stopped by the browser.
    expect(await select.inputValue()).toBe("")
    await select.selectOption("close_unpaid")
    await page.getByLabel("Note (required)").fill("Customer cancelled; refund offered")
    await page.getByRole("button", { name: "Close exception" }).click()
    await page.locator("dd", { hasText: "Partial payment (closed)" }).waitFor()
    const closed = await scenes.merchant.dashboard(`/api/dashboard/invoices/${scenes.partialException}`)
    expect(closed.body.invoice).toMatchObject({ exceptionStatus: "closed", exceptionAction: "close_unpaid" })
    expect(problems).toEqual([])
    await context.close()
  }, 120_000)

  it("writes the timeline in words, links transactions to their explorer and the payment page, and folds the statechart", async () => {
    const { context, page, problems } = await signedInPage(browser, app, scenes.merchant, "desktop")
    await page.goto(`${app.baseUrl}/dashboard#/invoices/${scenes.closedException}`)
    await page.getByRole("heading", { name: "Bread board" }).waitFor()
    const timeline = await page.locator("ol.timeline li").evaluateAll((items) => items.map((item) => [item.getAttribute("data-event"), item.textContent]))
    expect(timeline.map(([event]) => event)).toEqual(
      expect.arrayContaining(["invoice_created", "invoice_expired", "invoice_exception_opened", "invoice_confirmed", "invoice_exception_closed"])
    )
    for (const [event, text] of timeline) expect(text).toContain(EVENT_WORDS[event as keyof typeof EVENT_WORDS])
    const main = await page.locator("main").innerText()
    expect(main).not.toMatch(/\binvoice_[a-z_]+|\brefund_[a-z]+/)

    // The payment's transaction links to the network's explorer; the payment page links to itself.
    const detail = await scenes.merchant.dashboard(`/api/dashboard/invoices/${scenes.closedException}`)
    const payment = detail.body.invoice.payments[0]
    const link = page.locator("a.transaction-link").first()
    expect(await link.innerText()).toBe(payment.transactionHash)
    expect(await link.getAttribute("href")).toBe(DEFAULT_EXPLORERS[payment.network as keyof typeof DEFAULT_EXPLORERS].replace("{tx}", payment.transactionHash))
    expect(await link.getAttribute("rel")).toContain("noopener")
    expect(await page.getByRole("link", { name: detail.body.invoice.paymentUrl }).getAttribute("href")).toBe(detail.body.invoice.paymentUrl)

    // The statechart is folded: the page is a screen or so tall, and the chart's layout is not even fetched until it is opened.
    expect(await page.locator("svg.statechart").count()).toBe(0)
    expect(await page.locator("details.statechart-fold").getAttribute("open")).toBeNull()
    const folded = await page.evaluate(() => document.documentElement.scrollHeight)
    expect(folded).toBeLessThan(2000)
    const layout = page.waitForResponse((response) => response.url().includes("/dashboard/assets/lifecycle"))
    await page.getByText("Show the path on the statechart").click()
    await layout
    await page.locator("svg.statechart[data-region='status']").waitFor()
    await page.locator("svg.statechart[data-region='exception']").waitFor()
    expect(await page.evaluate(() => document.documentElement.scrollHeight)).toBeGreaterThan(folded)
    expect(problems).toEqual([])
    await context.close()
  }, 120_000)

  it("names the variable that turns on the watcher of each network without one", async () => {
    const { body } = await scenes.merchant.dashboard("/api/dashboard/chain-watchers")
    const unwatched: ReadonlyArray<string> = body.watchers.filter((watcher: { configured: boolean }) => !watcher.configured).map((watcher: { network: string }) => watcher.network)
    expect(unwatched.length).toBeGreaterThan(0)
    const { context, page, problems } = await signedInPage(browser, app, scenes.merchant, "phone")
    await page.goto(`${app.baseUrl}/dashboard#/chain-watchers`)
    await page.getByRole("heading", { name: "Chain watchers" }).waitFor()
    for (const network of unwatched) {
      const variable = network === "bitcoin" ? "CHECKOUT_ESPLORA_URL" : `CHECKOUT_RPC_URL_${network.toUpperCase()}`
      expect(await page.locator(`section[data-network='${network}'] code.variable`).innerText(), network).toBe(variable)
    }
    expect(problems).toEqual([])
    await context.close()
  }, 120_000)

  it("creates an invoice from the dashboard with the session, one per form even when sent twice, and shows it", async () => {
    const { context, page, problems } = await signedInPage(browser, app, scenes.merchant, "phone")
    const keys: Array<string | undefined> = []
    page.on("request", (request) => {
      if (request.method() === "POST" && request.url().endsWith("/api/checkout/invoices")) keys.push(request.headers()["idempotency-key"])
    })
    await page.goto(`${app.baseUrl}/dashboard#/invoices`)
    await page.getByRole("link", { name: "New invoice" }).click()
    await page.getByRole("heading", { name: "New invoice" }).waitFor()
    // Beyond the spec's maximum: the server's error appears next to the amount.
    await page.getByLabel("Amount (USD)").fill("2000000000")
    await page.getByRole("button", { name: "Create invoice" }).click()
    const amountError = page.locator("input[name='amountUsd'] + .field-error")
    await amountError.waitFor()
    expect(await amountError.innerText()).toMatch(/^amountUsd /)
    await page.getByLabel("Amount (USD)").fill("42.50")
    await page.getByLabel("Product name").fill("Copper kettle")
    await page.getByLabel("Reference (your order number)").fill("order-2001")
    await page.getByLabel("Customer email").fill("ada@example.com")
    await page.getByRole("button", { name: "Create invoice" }).click()
    await page.getByRole("heading", { name: "Copper kettle" }).waitFor()
    await page.getByText("Invoice created.").waitFor()
    const id = /#\/invoices\/([0-9a-f-]{36})/.exec(page.url())![1]
    const created = await scenes.merchant.dashboard(`/api/dashboard/invoices/${id}`)
    expect(created.body.invoice).toMatchObject({ amountUsd: 42.5, productName: "Copper kettle", merchantReference: "order-2001", customerEmail: "ada@example.com" })
    // Both sends of the form carried the same key: sent again, the same invoice comes back.
    expect(keys).toHaveLength(2)
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/)
    expect(keys[1]).toBe(keys[0])
    const again = await page.evaluate(async (key) => {
      const csrf = decodeURIComponent(/checkout_csrf=([^;]+)/.exec(document.cookie)![1])
      const response = await fetch("/api/checkout/invoices", {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": key!, "x-csrf-token": csrf },
        body: JSON.stringify({ amountUsd: 42.5, productName: "Copper kettle", merchantReference: "order-2001", customerEmail: "ada@example.com" })
      })
      return (await response.json()) as { id: string }
    }, keys[0])
    expect(again.id).toBe(id)
    expect(problems.filter((problem) => !/status of 400/.test(problem))).toEqual([])
    await context.close()
  }, 120_000)

  it("lands on the overview: invoices by status, USD received per day as an accessible SVG chart, open exceptions and waiting refunds", async () => {
    const overview = await scenes.merchant.dashboard("/api/dashboard/overview")
    expect(overview.status).toBe(200)
    const { context, page, problems } = await signedInPage(browser, app, scenes.merchant, "desktop")
    await page.goto(`${app.baseUrl}/dashboard`)
    await page.getByRole("heading", { name: "Overview" }).waitFor()
    const counts = Object.fromEntries(
      await page.locator("ul.status-counts li").evaluateAll((items) => items.map((item) => [item.getAttribute("data-status"), Number(item.querySelector(".count")!.textContent)]))
    )
    const listed = await scenes.merchant.dashboard("/api/dashboard/invoices?limit=200")
    const byStatus: Record<string, number> = {}
    for (const invoice of listed.body.invoices as ReadonlyArray<{ status: string }>) byStatus[invoice.status] = (byStatus[invoice.status] ?? 0) + 1
    for (const [status, count] of Object.entries(counts)) expect(count, status).toBe(byStatus[status] ?? 0)
    const open = (await scenes.merchant.dashboard("/api/dashboard/invoices?exceptionStatus=open&limit=200")).body.invoices.length
    expect(await page.locator("[data-tile='exceptions'] .count").innerText()).toBe(String(open))
    const waiting = (await scenes.merchant.dashboard("/api/dashboard/refunds?status=requested")).body.data.length
    expect(waiting).toBeGreaterThan(0)
    expect(await page.locator("[data-tile='refunds'] .count").innerText()).toBe(String(waiting))

    // 30 bars, today's the sum of today's payments (every scene was paid today); the chart has a title and a description.
    const chart = page.getByRole("img", { name: /USD received per day/ })
    await chart.waitFor()
    const bars = await page.locator("svg.received-chart g.bar").evaluateAll((groups) =>
      groups.map((group) => [group.getAttribute("data-day"), Number(group.getAttribute("data-usd"))])
    )
    expect(bars).toHaveLength(30)
    const today = new Date().toISOString().slice(0, 10)
    expect(bars.at(-1)![0]).toBe(today)
    const invoices = await Promise.all(
      (listed.body.invoices as ReadonlyArray<{ id: string }>).map(async (invoice) => (await scenes.merchant.dashboard(`/api/dashboard/invoices/${invoice.id}`)).body.invoice)
    )
    const receivedToday = invoices.reduce((sum, invoice) => sum + invoice.receivedAmountUsd, 0)
    expect(bars.at(-1)![1]).toBeCloseTo(receivedToday, 2)
    expect(bars.slice(0, -1).every(([, usd]) => usd === 0)).toBe(true)
    expect(await page.locator("svg.received-chart desc").textContent()).toMatch(/received from .* to .*; the most on/)
    // The same figures as a table, for whoever cannot read the chart.
    await page.getByText("The figures as a table").click()
    expect(await page.locator("details.figures tr[data-day]").count()).toBe(30)
    expect(problems).toEqual([])
    await context.close()
  }, 120_000)

  it("tells exception cards apart, shows times in UTC, keeps the chart's last label inside and says which action takes a late payment (#57 item 7)", async () => {
    const { context, page, problems } = await signedInPage(browser, app, scenes.merchant, "desktop")
    await page.goto(`${app.baseUrl}/dashboard#/exceptions`)
    await page.getByRole("heading", { name: "Exceptions to review" }).waitFor()
    const open = (await scenes.merchant.dashboard("/api/dashboard/invoices?exceptionStatus=open&limit=200")).body.invoices as ReadonlyArray<
      { id: string; merchantReference: string; createdAt: string }
    >
    const cards = await page.locator("ul.queue li.card p.facts").allInnerTexts()
    expect(cards).toEqual(
      open.map((invoice) => `Order ${invoice.merchantReference} · Invoice ${invoice.id.slice(0, 8)} · Created ${invoice.createdAt.slice(0, 19).replace("T", " ")} UTC`)
    )

    // The expired invoice with an open late-payment exception offers both actions and says which one takes the payment.
    const late = (await scenes.merchant.dashboard(`/api/dashboard/invoices/${scenes.openException}`)).body.invoice
    expect(late).toMatchObject({ status: "expired", exceptionType: "late_payment", exceptionStatus: "open" })
    await page.goto(`${app.baseUrl}/dashboard#/invoices/${scenes.openException}`)
    await page.getByRole("button", { name: "Record payment" }).waitFor()
    await page.getByRole("button", { name: "Close exception" }).waitFor()
    expect(await page.locator("[data-hint='late-payment']").innerText()).toMatch(/Close exception → “Accept the late payment”\. Use Record payment only for money received outside/)
    const times = await page.locator("ol.timeline time").allInnerTexts()
    expect(times.length).toBeGreaterThan(0)
    for (const time of times) expect(time).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/)
    // A paid invoice has no exception: no hint.
    await page.goto(`${app.baseUrl}/dashboard#/invoices/${scenes.paid}`)
    await page.getByRole("heading", { level: 1, name: "Walnut tray" }).waitFor()
    expect(await page.locator("[data-hint]").count()).toBe(0)

    await page.goto(`${app.baseUrl}/dashboard`)
    await page.getByRole("img", { name: /USD received per day/ }).waitFor()
    const [chartBox, lastLabel] = await page.locator("svg.received-chart").evaluate((chart) =>
      [chart.getBoundingClientRect().toJSON(), [...chart.querySelectorAll("text.day")].at(-1)!.getBoundingClientRect().toJSON()] as Array<DOMRect>
    )
    expect(lastLabel.left).toBeGreaterThanOrEqual(chartBox.left)
    expect(lastLabel.right).toBeLessThanOrEqual(chartBox.right)
    expect(problems).toEqual([])
    await context.close()
  }, 120_000)
})
