import { existsSync } from "node:fs"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { axeViolations } from "../support/AxeCheck.ts"
import { startTestApp, type TestApp } from "../support/TestApp.ts"
import { makePayScenes, type PayScene } from "./PayScenes.ts"

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const available = existsSync(CHROMIUM)
if (!available) console.log(`pay-page-states e2e: skipped, no browser at ${CHROMIUM} (apt-get install -y chromium)`)

const SIZES = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 800 } } as const

let app: TestApp
let browser: Browser
let scenes: ReadonlyArray<PayScene>
const scene = (name: string) => scenes.find((candidate) => candidate.name === name)!

/** A scene's page at a size, in a payer's locale and zone, with its requests and console errors recorded. */
const open = async (view: PayScene, size: keyof typeof SIZES, options: { locale?: string; timezoneId?: string } = {}) => {
  const context = await browser.newContext({ viewport: SIZES[size], locale: options.locale ?? "en-US", timezoneId: options.timezoneId ?? "America/New_York" })
  const page: Page = await context.newPage()
  const requests: Array<string> = []
  const problems: Array<string> = []
  page.on("request", (request) => requests.push(request.url()))
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(message.text())
  })
  page.on("pageerror", (error) => problems.push(error.message))
  await page.goto(`${app.baseUrl}/pay/${view.id}`)
  await page.locator(`.status-${view.status}`).waitFor()
  // A page that may offer a refund asks for it first; the state is complete once it has answered.
  if (await page.locator("section.refund").count() > 0) await page.locator("section.refund:not([hidden])").waitFor({ timeout: 15_000 })
  await view.prepare?.(page)
  return { context, page, requests, problems }
}

describe.skipIf(!available)("every state of the payer page", () => {
  beforeAll(async () => {
    app = await startTestApp()
    scenes = await makePayScenes(app)
    const { chromium } = await import("playwright-core")
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] })
  }, 180_000)

  afterAll(async () => {
    await browser?.close()
    await app?.close()
  })

  for (const size of ["phone", "desktop"] as const) {
    it(`has no axe-core violation of any impact, no console error and no request to another host, in every state on a ${size}`, async () => {
      const found: Record<string, ReadonlyArray<string>> = {}
      for (const view of scenes) {
        const { context, page, requests, problems } = await open(view, size)
        try {
          const violations = [...await axeViolations(page), ...problems, ...requests.filter((url) => !url.startsWith(app.baseUrl)).map((url) => `request to ${url}`)]
          if (violations.length > 0) found[view.name] = violations
        } finally {
          await context.close()
        }
      }
      expect(found).toEqual({})
    }, 240_000)
  }

  it("puts the wallet button within a phone's first screen, above the QR code; beside it on a desktop", async () => {
    for (const name of ["awaiting", "partial"]) {
      for (const size of ["phone", "desktop"] as const) {
        const { context, page } = await open(scene(name), size)
        try {
          const option = page.locator(".pay-options > .option-group section.option:not([hidden])").first()
          const button = (await option.locator("a.open-wallet").boundingBox())!
          const qr = (await option.locator("figure.qr").boundingBox())!
          expect(button.y + button.height, `${name} ${size}: the wallet button within the first screen`).toBeLessThanOrEqual(SIZES[size].height)
          if (size === "phone") expect(qr.y, `${name}: the QR below the button`).toBeGreaterThanOrEqual(button.y + button.height)
          else expect(qr.x, `${name}: the QR beside the button`).toBeGreaterThanOrEqual(button.x + button.width)
        } finally {
          await context.close()
        }
      }
    }
  }, 120_000)

  it("leads a partial payment with the option paid into; the other networks fold behind \"Pay the rest another way\"", async () => {
    const { context, page } = await open(scene("partial"), "phone")
    try {
      expect(await page.locator(".pay-options > .option-group section.option").count()).toBe(1)
      expect(await page.locator(".pay-options > .option-group .option-progress").isVisible()).toBe(true)
      const folded = page.locator("details.other-options")
      expect(await folded.locator("summary").textContent()).toBe("Pay the rest another way")
      expect(await folded.locator("section.option").first().isVisible()).toBe(false)
      await folded.locator("summary").click()
      expect(await folded.locator("section.option:not([hidden])").count()).toBe(1)
      expect(await folded.locator("section.option:not([hidden])").isVisible()).toBe(true)
    } finally {
      await context.close()
    }
  }, 60_000)

  it("tells a late payer that their payment arrived, with its receipt, and what follows; never only \"Do not send a payment\"", async () => {
    const cases = [
      { name: "late", lead: "We received your payment, but it arrived after the deadline.", next: "The seller will review it." },
      { name: "late-partial", lead: "We received part of your payment, but the rest did not arrive before the deadline.", next: "The seller will review it." },
      { name: "closed-unpaid", lead: "We received your payment, but it arrived after the deadline.", next: "The seller closed this invoice unpaid" }
    ]
    for (const { name, lead, next } of cases) {
      const { context, page } = await open(scene(name), "phone")
      try {
        const status = page.locator("#status")
        expect(await status.locator(".late-lead").textContent()).toBe(lead)
        expect(await status.locator(".late-next").textContent()).toContain(next)
        expect(await status.textContent()).not.toContain("Do not send a payment to it")
        expect(await status.locator(".receipt-amount").textContent()).toMatch(/\$\d+\.\d\d.*USDC on Base/s)
        expect(await status.locator(".receipt-tx a.tx-link").getAttribute("href")).toMatch(/^https:\/\/basescan\.org\/tx\/0x[0-9a-f]{64}$/)
        expect(await page.locator(".pay-options").count(), `${name}: nothing to pay`).toBe(0)
      } finally {
        await context.close()
      }
    }
  }, 90_000)

  it("offers a refund with one button that opens its form", async () => {
    const { context, page } = await open(scene("closed-unpaid"), "phone")
    try {
      const refund = page.locator("section.refund")
      expect(await refund.locator("form.refund-form").isVisible()).toBe(false)
      expect(await refund.getByRole("button").count()).toBe(1)
      await refund.getByRole("button", { name: "Request a refund" }).click()
      expect(await refund.locator("form.refund-form").isVisible()).toBe(true)
      expect(await refund.locator("button.refund-open").isVisible()).toBe(false)
      expect(await refund.getByRole("button").count()).toBe(1)
      expect(await page.evaluate(() => document.activeElement?.id)).toBe("refund-address")
    } finally {
      await context.close()
    }
  }, 60_000)

  it("writes every date one way, in the payer's locale and time zone with the zone named", async () => {
    const { context, page } = await open(scene("late"), "phone", { locale: "en-GB", timezoneId: "Asia/Tokyo" })
    try {
      const times = await page.locator("time[data-local]").evaluateAll((elements) =>
        elements.map((element) => ({ text: element.textContent, iso: element.getAttribute("datetime")! }))
      )
      expect(times.length).toBeGreaterThan(0)
      for (const time of times) {
        const expected = new Intl.DateTimeFormat("en-GB", {
          timeZone: "Asia/Tokyo",
          year: "numeric",
          month: "short",
          day: "numeric",
          hour: "numeric",
          minute: "2-digit",
          timeZoneName: "short"
        }).format(new Date(time.iso))
        expect(time.text).toBe(expected)
        expect(time.text).toMatch(/GMT\+9|JST/)
      }
      expect(await page.locator("body").textContent()).not.toContain("UTC")
    } finally {
      await context.close()
    }
  }, 60_000)
})
