/**
 * The dashboard's pages for the Lighthouse bench (`npm run bench:pages`): the login screen and every
 * view after login (the views of test/e2e/DashboardScenes.ts, in the given app with the development
 * simulator's invoices). Signing in happens once, before the first view, in the bench's browser:
 * the session and CSRF cookies and the user id the page keeps in localStorage (which Lighthouse is
 * told to keep).
 */
import { makeScenes, views } from "../../test/e2e/DashboardScenes.ts"
import type { TestApp } from "../../test/support/TestApp.ts"
import type { ScoredScene } from "./lighthouse.ts"

export const dashboardScenes = async (app: TestApp): Promise<ReadonlyArray<ScoredScene>> => {
  const scenes = await makeScenes(app)
  let signedIn: Promise<void> | undefined
  const signIn = async (port: number) => {
    const { chromium } = await import("playwright-core")
    const browser = await chromium.connectOverCDP(`http://127.0.0.1:${port}`)
    try {
      const context = browser.contexts()[0]
      await context.addCookies([
        { name: "checkout_session", value: scenes.merchant.sessionToken, url: app.baseUrl },
        { name: "checkout_csrf", value: scenes.merchant.csrfToken, url: app.baseUrl }
      ])
      const page = await context.newPage()
      await page.goto(`${app.baseUrl}/dashboard#/login`)
      await page.evaluate((id) => localStorage.setItem("checkout.userId", id), scenes.merchant.merchantId)
      await page.close()
    } finally {
      await browser.close()
    }
  }
  const prepare = (port: number) => (signedIn ??= signIn(port))
  return [
    { name: "dashboard login", url: `${app.baseUrl}/dashboard#/login` },
    ...views(scenes).map((view) => ({ name: `dashboard ${view.name}`, url: `${app.baseUrl}/dashboard${view.hash}`, prepare, keepStorage: true }))
  ]
}
