import { existsSync } from "node:fs"
import { join } from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STRINGS } from "../../src/pay/Strings.ts"
import { axeViolations } from "../support/AxeCheck.ts"
import { startTestApp, type TestApp } from "../support/TestApp.ts"
import { makePayScenes, type PayScene } from "./PayScenes.ts"

/** Issue #57 item 5: the payer page in the payer's language, in Chromium. */

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const available = existsSync(CHROMIUM)
if (!available) console.log(`pay-page-languages e2e: skipped, no browser at ${CHROMIUM} (apt-get install -y chromium)`)
/** Set to write the docs' screenshots of the page in Japanese and German (docs/payment-page.md). */
const SCREENSHOTS = process.env.PAY_LANGUAGE_SCREENSHOTS === "1" ? join(import.meta.dirname, "..", "..", "docs", "screenshots") : undefined
const SIZES = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 800 } } as const

let app: TestApp
let browser: Browser
let scenes: ReadonlyArray<PayScene>
const scene = (name: string) => scenes.find((candidate) => candidate.name === name)!

const open = async (view: PayScene, query: string, locale: string, size: keyof typeof SIZES = "phone") => {
  const context = await browser.newContext({ viewport: SIZES[size], locale, timezoneId: "Europe/Berlin" })
  const page: Page = await context.newPage()
  const problems: Array<string> = []
  page.on("pageerror", (error) => problems.push(error.message))
  const response = await page.goto(`${app.baseUrl}/pay/${view.id}${query}`)
  await page.locator(`.status-${view.status}`).waitFor()
  return { context, page, response: response!, problems }
}

describe.skipIf(!available)("the payer page in the payer's language", () => {
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

  for (const [language, how] of [["ja", "Accept-Language"], ["de", "?lang="]] as const) {
    it(`speaks ${language} when ${how} asks for it, with the right headers, Intl formats and no axe violation`, async () => {
      const { context, page, response, problems } = await open(scene("awaiting"), how === "?lang=" ? `?lang=${language}` : "", how === "?lang=" ? "en-US" : "ja-JP")
      try {
        const headers = response.headers()
        expect(headers["content-language"]).toBe(language)
        expect(headers.vary).toContain("accept-language")
        expect(headers["x-robots-tag"]).toBe("noindex, nofollow")
        expect(await page.locator("html").getAttribute("lang")).toBe(language)
        expect(await page.locator(`meta[name="robots"]`).getAttribute("content")).toBe("noindex, nofollow")
        expect(await page.locator(`meta[name="description"]`).getAttribute("content")).toBe(STRINGS[language].description)
        expect(await page.locator(".amount").getAttribute("aria-label")).toBe(STRINGS[language].amountDue)
        const amount = new Intl.NumberFormat(language, { style: "currency", currency: "USD" }).format(12.5)
        expect(await page.locator(".amount").textContent()).toBe(amount)
        expect(await page.locator("nav.languages [aria-current]").getAttribute("lang")).toBe(language)
        expect([...await axeViolations(page), ...problems]).toEqual([])
        if (SCREENSHOTS !== undefined) {
          for (const size of ["phone", "desktop"] as const) {
            await page.setViewportSize(SIZES[size])
            await page.screenshot({ path: join(SCREENSHOTS, `pay-${language}-${size}.png`), fullPage: size === "phone" ? false : true })
          }
        }
      } finally {
        await context.close()
      }
    }, 90_000)
  }

  it("switches language with the picker, keeps it across an option tab, and writes dates in the page's language", async () => {
    const { context, page, problems } = await open(scene("awaiting"), "", "en-US")
    try {
      await page.locator("nav.languages").getByRole("link", { name: "Deutsch" }).click()
      await page.waitForURL(/\?lang=de$/)
      await page.locator(`html[lang="de"]`).waitFor()
      expect(await page.locator("#status").textContent()).toContain(STRINGS.de.awaiting)
      const tab = page.locator("a.option-tab:not([aria-current])").first()
      expect(await tab.getAttribute("href")).toMatch(/^\?lang=de&option=/)
      await tab.click()
      expect(new URL(page.url()).searchParams.get("lang")).toBe("de")
      expect([...await axeViolations(page), ...problems]).toEqual([])
    } finally {
      await context.close()
    }
    const late = await open(scene("late"), "?lang=ru", "en-US")
    try {
      const time = late.page.locator("time[data-local]").first()
      const iso = (await time.getAttribute("datetime"))!
      const format = new Intl.DateTimeFormat("ru", { timeZone: "Europe/Berlin", year: "numeric", month: "short", day: "numeric", hour: "numeric", minute: "2-digit",
        timeZoneName: "short" })
      expect(await time.textContent()).toBe(format.format(new Date(iso)))
    } finally {
      await late.context.close()
    }
  }, 90_000)
})
