/**
 * Lighthouse (12.2.3, its default mobile profile: a slow 4G and a 4× slower CPU, simulated) on the
 * dashboard: the login screen and every view after login (the views of test/e2e/DashboardScenes.ts,
 * in a throwaway app with the development simulator's invoices), each scored for performance,
 * accessibility and best practices. Prints one line per view and a JSON summary; exits 1 when a
 * view scores below `--min` (100 by default) in any of the three.
 *
 *   npm run bench:dashboard-pages [-- --min 90 --only overview,invoices]
 *
 * Uses Debian's chromium (CHROMIUM_PATH to override), driven over its debugging port.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import lighthouse from "lighthouse"
import { makeScenes, views } from "../../test/e2e/DashboardScenes.ts"
import { startTestApp } from "../../test/support/TestApp.ts"

const { values } = parseArgs({ options: { min: { type: "string", default: "100" }, only: { type: "string" }, port: { type: "string", default: "9333" } } })
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
if (!existsSync(CHROMIUM)) {
  console.error(`no browser at ${CHROMIUM} (apt-get install -y chromium)`)
  process.exit(1)
}
const CATEGORIES = ["performance", "accessibility", "best-practices"] as const
const port = Number(values.port)

interface Score {
  readonly view: string
  readonly performance: number
  readonly accessibility: number
  readonly "best-practices": number
  /** The audits below 1 in those categories, by id: what to mend. */
  readonly failing: ReadonlyArray<string>
}

const score = async (view: string, url: string): Promise<Score> => {
  const result = await lighthouse(url, { port, output: "json", logLevel: "error", onlyCategories: [...CATEGORIES], disableStorageReset: true })
  if (result === undefined) throw new Error(`lighthouse gave no result for ${view}`)
  const { categories, audits } = result.lhr
  const scoreOf = (category: typeof CATEGORIES[number]) => Math.round((categories[category]?.score ?? 0) * 100)
  const failing = CATEGORIES.flatMap((category) =>
    (categories[category]?.auditRefs ?? []).filter((ref) => ref.weight > 0 && audits[ref.id]?.score !== null && (audits[ref.id]?.score ?? 1) < 1)
      .map((ref) => `${ref.id} (${audits[ref.id]?.displayValue ?? audits[ref.id]?.score})`)
  )
  return { view, performance: scoreOf("performance"), accessibility: scoreOf("accessibility"), "best-practices": scoreOf("best-practices"), failing }
}

const app = await startTestApp()
const profile = mkdtempSync(join(tmpdir(), "lighthouse-dashboard-"))
const { chromium } = await import("playwright-core")
const context = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM,
  args: [`--remote-debugging-port=${port}`, "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
})
const results: Array<Score> = []
try {
  const scenes = await makeScenes(app)
  const only = values.only?.split(",")
  const wanted = (name: string) => only === undefined || only.includes(name)
  if (wanted("login")) results.push(await score("login", `${app.baseUrl}/dashboard#/login`))
  // Signed in from here on: the session and CSRF cookies, and the user id the page keeps (the profile is shared with Lighthouse's tab).
  await context.addCookies([
    { name: "checkout_session", value: scenes.merchant.sessionToken, url: app.baseUrl },
    { name: "checkout_csrf", value: scenes.merchant.csrfToken, url: app.baseUrl }
  ])
  const page = await context.newPage()
  await page.goto(`${app.baseUrl}/dashboard#/login`)
  await page.evaluate((id) => localStorage.setItem("checkout.userId", id), scenes.merchant.merchantId)
  await page.close()
  for (const view of views(scenes).filter((candidate) => wanted(candidate.name))) {
    const result = await score(view.name, `${app.baseUrl}/dashboard${view.hash}`)
    results.push(result)
    console.log(`${view.name.padEnd(26)} ${CATEGORIES.map((category) => String(result[category]).padStart(4)).join("")}  ${result.failing.join(", ")}`)
  }
} finally {
  await context.close()
  await app.close()
  rmSync(profile, { recursive: true, force: true })
}
console.log(JSON.stringify({ categories: CATEGORIES, results }))
const below = results.filter((result) => CATEGORIES.some((category) => result[category] < Number(values.min)))
if (below.length > 0) {
  console.error(`below ${values.min}: ${below.map((result) => result.view).join(", ")}`)
  process.exit(1)
}
