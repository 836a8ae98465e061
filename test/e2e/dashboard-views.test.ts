import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { AxeBuilder } from "@axe-core/playwright"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { ChainWatchers } from "../../src/chains/ChainWatchers.ts"
import { layoutLifecycle } from "../../src/dashboard/LifecycleChart.ts"
import { STATUS_WORDS } from "../../src/dashboard/Words.ts"
import { INVOICE_STATUSES } from "../../src/domain/Statuses.ts"
import { startRpcFront } from "../support/RpcFront.ts"
import { startSolanaNode } from "../support/SolanaRpc.ts"
import { startTestApp, type TestApp } from "../support/TestApp.ts"
import { makeScenes, type Scenes, signedInPage, SIZES, type Size, views } from "./DashboardScenes.ts"

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const available = existsSync(CHROMIUM)

let app: TestApp
let browser: Browser
let scenes: Scenes

/** The element's box lies inside the viewport's width and is not clipped by a scrolling ancestor. */
const inView = (page: Page, selector: string) =>
  page.locator(selector).evaluateAll((elements) =>
    elements.map((element) => {
      const box = element.getBoundingClientRect()
      let clipped = false
      for (let parent = element.parentElement; parent !== null; parent = parent.parentElement) {
        const style = getComputedStyle(parent)
        if (style.overflowX === "visible") continue
        const outer = parent.getBoundingClientRect()
        if (box.left < outer.left - 0.5 || box.right > outer.right + 0.5) clipped = true
      }
      return { text: element.textContent, visible: box.width > 0 && box.height > 0, inside: box.left >= 0 && box.right <= innerWidth, clipped }
    })
  )

/**
 * axe-core's violations of any impact on the page as it is now, as "rule: target" lines (none expected).
 * Run in the page itself (`axe.run`, the same rules and options): the default runs each frame's part
 * and then finishes in a new blank page, which costs a page and a second axe-core load per check and
 * about half of this suite's time; the dashboard has no frame that needs the cross-origin path.
 */
const axeViolations = async (page: Page) => {
  const results = await new AxeBuilder({ page }).setLegacyMode().analyze()
  return results.violations.flatMap((violation) => violation.nodes.map((node) => `${violation.impact ?? "?"} ${violation.id}: ${node.target.join(" ")}`))
}

describe.skipIf(!available)("every dashboard view", () => {
  beforeAll(async () => {
    app = await startTestApp()
    scenes = await makeScenes(app)
    const { chromium } = await import("playwright-core")
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"] })
  }, 300_000)

  afterAll(async () => {
    await browser?.close()
    await app?.close()
  })

  for (const size of Object.keys(SIZES) as Array<Size>) {
    it(`opens every view at ${size} size (${SIZES[size].width}×${SIZES[size].height}) without a page or console error, a request to another host or an axe-core violation`,
      async () => {
        // Before anyone is logged in: the login screen, and neither the navigation nor "Log out".
        const anonymous = await signedInPage(browser, app, null, size)
        await anonymous.page.goto(`${app.baseUrl}/dashboard`)
        await anonymous.page.getByRole("heading", { name: "Log in" }).waitFor()
        expect(await anonymous.page.getByRole("navigation").count()).toBe(0)
        expect(await anonymous.page.getByRole("button", { name: "Log out" }).isVisible()).toBe(false)
        expect(await anonymous.page.getByRole("link", { name: "Invoices" }).isVisible()).toBe(false)
        expect(await axeViolations(anonymous.page), "login").toEqual([])
        expect(anonymous.problems).toEqual([])
        await anonymous.context.close()

        const { context, page, problems } = await signedInPage(browser, app, scenes.merchant, size)
        for (const view of views(scenes)) {
          await page.goto(`${app.baseUrl}/dashboard${view.hash}`)
          await page.getByRole("heading", { name: view.heading, exact: true }).waitFor()
          await page.waitForLoadState("networkidle")
          expect(await page.getByRole("heading", { name: "Something went wrong" }).count(), view.name).toBe(0)
          // Nothing wider than the screen: wide content (the chart) scrolls inside its own frame.
          expect(await page.evaluate(() => document.documentElement.scrollWidth), view.name).toBeLessThanOrEqual(SIZES[size].width)
          expect(await axeViolations(page), view.name).toEqual([])
          // An invoice's statechart, once unfolded, too.
          const fold = page.locator("details.statechart-fold > summary")
          if (await fold.count() > 0) {
            await fold.click()
            await page.locator("details.statechart-fold svg.statechart").first().waitFor()
            expect(await axeViolations(page), `${view.name} with its statechart`).toEqual([])
          }
          expect(problems, view.name).toEqual([])
        }
        await context.close()
      }, 300_000)
  }

  it("at 390 px the invoice list is cards whose amount and status (in words) are in view, and the keys' Revoke too", async () => {
    const { context, page, problems } = await signedInPage(browser, app, scenes.merchant, "phone")
    await page.goto(`${app.baseUrl}/dashboard#/invoices`)
    await page.getByRole("link", { name: "Ceramic mug" }).waitFor()
    const amounts = await inView(page, "tr[data-invoice] td.amount")
    const statuses = await inView(page, "tr[data-invoice] .status")
    expect(amounts).toHaveLength(8)
    expect(statuses).toHaveLength(8)
    for (const cell of [...amounts, ...statuses]) expect(cell, cell.text ?? "").toMatchObject({ visible: true, inside: true, clipped: false })
    // Statuses read as words, never as the API's names.
    expect(statuses.map((status) => status.text).sort()).toEqual(
      ["Awaiting payment", "Confirmed", "Confirmed", "Confirmed", "Expired", "Expired", "Partially paid", "Voided"]
    )
    const text = await page.locator("main").innerText()
    for (const status of INVOICE_STATUSES) expect(text).not.toContain(status)
    expect(await page.locator("tr[data-invoice]").first().evaluate((row) => getComputedStyle(row).display)).toBe("grid")

    await page.goto(`${app.baseUrl}/dashboard#/keys`)
    await page.getByRole("button", { name: "Revoke" }).first().waitFor()
    const revoke = await inView(page, "tr[data-key] button")
    expect(revoke.length).toBeGreaterThan(0)
    for (const button of revoke) expect(button).toMatchObject({ text: "Revoke", visible: true, inside: true, clipped: false })
    expect(problems).toEqual([])
    await context.close()
  })

  it("draws the lifecycle chart with a state per status, fitted to 390 px, with zoom controls", async () => {
    const { context, page, problems } = await signedInPage(browser, app, scenes.merchant, "phone")
    await page.goto(`${app.baseUrl}/dashboard#/lifecycle`)
    const chart = page.locator("svg.statechart[data-region='status']")
    await chart.waitFor()
    const states = await chart.locator("g.state").evaluateAll((groups) => groups.map((group) => [group.getAttribute("data-state"), group.textContent]))
    expect(states.map(([state]) => state).sort()).toEqual([...INVOICE_STATUSES].sort())
    for (const [state, text] of states) expect(text).toContain(STATUS_WORDS[state as keyof typeof STATUS_WORDS])
    // Fitted: every edge and state within the screen's width.
    const boxes = await chart.locator("g.transition path, g.state rect").evaluateAll((elements) =>
      elements.map((element) => {
        const box = element.getBoundingClientRect()
        return { left: box.left, right: box.right }
      })
    )
    expect(boxes.length).toBeGreaterThan(20)
    for (const box of boxes) {
      expect(box.left).toBeGreaterThanOrEqual(0)
      expect(box.right).toBeLessThanOrEqual(390)
    }
    // Zoomed in, the chart is wider than the screen and pans inside its frame; the page stays 390 px wide.
    const figure = page.locator("figure.chart").first()
    const before = (await chart.boundingBox())!.width
    await figure.getByRole("button", { name: "Zoom in" }).click()
    await figure.getByRole("button", { name: "Zoom in" }).click()
    const after = (await chart.boundingBox())!.width
    expect(after).toBeGreaterThan(before * 2)
    expect(await figure.locator(".chart-frame").evaluate((frame) => frame.scrollWidth > frame.clientWidth)).toBe(true)
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    await figure.getByRole("button", { name: "Fit to width" }).click()
    expect((await chart.boundingBox())!.width).toBeCloseTo(before, 0)
    expect(problems).toEqual([])
    await context.close()
  })

  it("marks a paid invoice's path on the chart: the states it visited, the transitions it took, the state it is in", async () => {
    const { context, page, problems } = await signedInPage(browser, app, scenes.merchant, "phone")
    await page.goto(`${app.baseUrl}/dashboard#/invoices/${scenes.paid}`)
    const chart = page.locator("svg.statechart[data-region='status']")
    await page.getByText("Show the path on the statechart").click()
    await chart.waitFor()
    const classes = Object.fromEntries(
      await chart.locator("g.state").evaluateAll((groups) => groups.map((group) => [group.getAttribute("data-state"), group.getAttribute("class")]))
    )
    expect(classes).toMatchObject({
      awaiting_payment: "state visited",
      payment_detected: "state visited",
      confirmed: "state final visited current",
      partially_paid: "state",
      expired: "state",
      voided: "state"
    })
    expect(await chart.locator("g.state[aria-current='step']").getAttribute("data-state")).toBe("confirmed")
    const taken = await chart.locator("g.transition.taken").evaluateAll((groups) => groups.map((group) => [group.getAttribute("data-edge"), group.getAttribute("data-steps")]))
    expect(taken.sort()).toEqual([["awaiting_payment->payment_detected", "1"], ["payment_detected->confirmed", "2"]])
    expect(await page.locator("ol.path").first().innerText()).toMatch(
      /Awaiting payment\n.*Payment detected \(\d.*\)\n.*Confirmed \(Payment confirmed, .*\)/
    )
    // The payment is shown in its asset (the API's payment has no USD amount: round 1's crash).
    await page.getByText("64 USDT").waitFor()

    // An invoice whose late payment opened an exception: expired, and open.late_payment in the exception region.
    await page.goto(`${app.baseUrl}/dashboard#/invoices/${scenes.openException}`)
    const exception = page.locator("svg.statechart[data-region='exception']")
    await page.getByRole("heading", { name: "Tea towel" }).waitFor()
    await page.getByText("Show the path on the statechart").click()
    await exception.waitFor()
    expect(await exception.locator("g.state.current").getAttribute("data-state")).toBe("open.late_payment")
    expect(await exception.locator("g.state.visited").evaluateAll((groups) => groups.map((group) => group.getAttribute("data-state")).sort()))
      .toEqual(["none", "open", "open.late_payment"])
    expect(await exception.locator("g.transition.taken").getAttribute("data-edge")).toBe("none->open.late_payment")
    expect(await page.locator("svg.statechart[data-region='status'] g.state.current").getAttribute("data-state")).toBe("expired")
    // Closed by accepting the late payment: confirmed from expired, and the exception closed.
    await page.goto(`${app.baseUrl}/dashboard#/invoices/${scenes.closedException}`)
    await page.getByRole("heading", { name: "Bread board" }).waitFor()
    await page.getByText("Show the path on the statechart").click()
    await page.locator("svg.statechart[data-region='exception'] g.state.current[data-state='closed']").waitFor()
    expect(await page.locator("svg.statechart[data-region='status'] g.transition.taken").evaluateAll((groups) => groups.map((group) => group.getAttribute("data-edge"))))
      .toEqual(expect.arrayContaining(["awaiting_payment->expired", "expired->confirmed"]))
    expect(problems).toEqual([])
    await context.close()
  }, 120_000)

  it("shows a configured network's endpoints: each one's state in words and colour, and which one is in use", async () => {
    const node = await startSolanaNode()
    const limited = await startRpcFront(node.url, "jsonrpc")
    limited.mode = "rateLimited"
    limited.retryAfterSeconds = 600
    const watched = await startTestApp({}, { CHECKOUT_RPC_URL_SOLANA: `${node.url}, ${limited.url}/key/SECRETKEY`, CHECKOUT_RPC_TIMEOUT_MS: "1000" })
    try {
      await watched.run(Effect.flatMap(ChainWatchers, (watchers) => watchers.poll("solana")))
      const merchant = await watched.createMerchant()
      const { context, page, problems } = await signedInPage(browser, watched, merchant, "phone")
      await page.goto(`${watched.baseUrl}/dashboard#/chain-watchers`)
      await page.getByRole("link", { name: "Chain watchers" }).waitFor()
      const solana = page.locator("section[data-network='solana']")
      const preferred = solana.locator(`tr[data-endpoint='${node.url}']`)
      await preferred.waitFor()
      expect(await preferred.locator(".status").innerText()).toBe("Healthy")
      expect(await preferred.innerText()).toContain("In use")
      const second = solana.locator(`tr[data-endpoint='${limited.url}']`)
      expect(await second.locator(".status").innerText()).toMatch(/^Rate-limited until /)
      expect(await second.locator(".status").evaluate((badge) => getComputedStyle(badge).backgroundColor)).toBe("rgb(255, 243, 214)")
      expect(await page.locator("main").innerText()).not.toContain("SECRETKEY")
      for (const cell of await inView(page, "section[data-network='solana'] tr[data-endpoint] .status")) {
        expect(cell, cell.text ?? "").toMatchObject({ visible: true, inside: true, clipped: false })
      }
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
      expect(problems).toEqual([])
      await context.close()
    } finally {
      await watched.close()
      await limited.close()
      await node.close()
    }
  }, 120_000)

  it("lays the chart out the same way every time (at server start, from the machine)", async () => {
    const [first, second] = [await layoutLifecycle(), await layoutLifecycle()]
    expect(JSON.stringify(second)).toBe(JSON.stringify(first))
    expect(first.map((chart) => chart.region)).toEqual(["status", "exception"])
  })

  it("the dashboard's browser code has no `any`: its JSON is typed by the server's response schemas", () => {
    const directory = join(import.meta.dirname, "..", "..", "src", "dashboard", "browser")
    for (const file of readdirSync(directory).filter((name) => name.endsWith(".ts"))) {
      const code = readFileSync(join(directory, file), "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "")
      expect(code, file).not.toMatch(/(:|as|<|\|)\s*any\b/)
    }
  })
})
