/**
 * The dashboard's pages for the Lighthouse bench (`npm run bench:pages`): the login screen and every
 * view after login (the views of test/e2e/DashboardScenes.ts, in the given app with the development
 * simulator's invoices). Signing in happens once, before the first view, in the bench's browser:
 * the session and CSRF cookies and the user id the page keeps in localStorage (which Lighthouse is
 * told to keep), checked by opening the first view. Its HTTP cache is cleared before each view, so
 * that every view is scored as a first visit (Lighthouse itself would clear it with the storage).
 */
import type { BrowserContext } from "playwright-core"
import { makeScenes, views } from "../../test/e2e/DashboardScenes.ts"
import type { TestApp } from "../../test/support/TestApp.ts"
import type { ScoredScene } from "./lighthouse.ts"

export const dashboardScenes = async (app: TestApp): Promise<ReadonlyArray<ScoredScene>> => {
  const scenes = await makeScenes(app)
  const first = views(scenes)[0]
  const inBrowser = async (port: number, use: (context: BrowserContext) => Promise<void>) => {
    const { chromium } = await import("playwright-core")
    const browser = await chromium.connectOverCDP(`http://127.0.0.1:${port}`)
    try {
      await use(browser.contexts()[0])
    } finally {
      await browser.close()
    }
  }
  let signedIn: Promise<void> | undefined
  const signIn = (port: number) =>
    inBrowser(port, async (context) => {
      await context.addCookies([
        { name: "checkout_session", value: scenes.merchant.sessionToken, url: app.baseUrl },
        { name: "checkout_csrf", value: scenes.merchant.csrfToken, url: app.baseUrl }
      ])
      const page = await context.newPage()
      await page.goto(`${app.baseUrl}/dashboard#/login`)
      await page.evaluate((id) => localStorage.setItem("checkout.userId", id), scenes.merchant.merchantId)
      await page.goto(`${app.baseUrl}/dashboard${first.hash}`)
      await page.getByRole("heading", { name: first.heading, exact: true }).waitFor({ timeout: 60_000 })
      await page.close()
    })
  const clearCache = (port: number) =>
    inBrowser(port, async (context) => {
      const page = await context.newPage()
      await (await context.newCDPSession(page)).send("Network.clearBrowserCache")
      await page.close()
    })
  const prepare = async (port: number) => {
    await (signedIn ??= signIn(port))
    await clearCache(port)
  }
  return [
    { name: "dashboard login", url: `${app.baseUrl}/dashboard#/login` },
    ...views(scenes).map((view) => ({ name: `dashboard ${view.name}`, url: `${app.baseUrl}/dashboard${view.hash}`, prepare, keepStorage: true }))
  ]
}
