/**
 * Screenshots of every dashboard view (and the invoices and keys with test data shown) and of the
 * payer's hosted payment page in each state (with a refund offered and one requested, and a test
 * invoice's), at a
 * phone's and a desktop's size, into docs/screenshots/ (PNG), from a throwaway app (in-memory
 * database, development simulator):
 *
 *   node_modules/.bin/node --experimental-strip-types --disable-warning=ExperimentalWarning scripts/screenshots.ts [--pay-only]
 *
 * `--pay-only` redraws the payment page's screenshots (pay-*.png) and leaves the dashboard's.
 * Uses Debian's chromium (CHROMIUM_PATH to override). Fails when a view raises a page or console error.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs"
import { join } from "node:path"
import { makeScenes, type Scenes, signedInPage, SIZES, type Size, views } from "../test/e2e/DashboardScenes.ts"
import { makePayScenes, type PayScene } from "../test/e2e/PayScenes.ts"
import { startTestApp } from "../test/support/TestApp.ts"

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
if (!existsSync(CHROMIUM)) {
  console.error(`no browser at ${CHROMIUM} (apt-get install -y chromium)`)
  process.exit(1)
}
const directory = join(import.meta.dirname, "..", "docs", "screenshots")
mkdirSync(directory, { recursive: true })
const payOnly = process.argv.includes("--pay-only")
/** Drawn by other scripts (scripts/embed-screenshots.ts, the languages' e2e test): kept. */
const drawnElsewhere = (name: string) => /^(?:embed-modal|pay-ja|pay-de)-/.test(name)
for (const file of readdirSync(directory).filter((name) => name.endsWith(".png") && !drawnElsewhere(name) && (!payOnly || name.startsWith("pay-")))) {
  rmSync(join(directory, file))
}

const app = await startTestApp()

/**
 * The payment page's states: the shared payer scenes (test/e2e/PayScenes.ts, the same the axe tests
 * and the Lighthouse bench use), and a refund already requested (the dashboard scenes' overpaid invoice).
 */
const payerScenes = async (scenes: Scenes, test: TestScenes): Promise<ReadonlyArray<PayScene>> => [
  ...await makePayScenes(app),
  { name: "refund-requested", id: scenes.overpaid, status: "confirmed", prepare: (page) => page.locator(".refund-item").first().waitFor() },
  { name: "test", id: test.awaiting, status: "awaiting_payment", prepare: (page) => page.getByRole("button", { name: /Simulate/ }).first().waitFor() }
]

interface TestScenes {
  readonly awaiting: string
}

const succeeded = (what: string, answer: { status: number; body: any }) => {
  if (answer.status >= 300) throw new Error(`${what}: HTTP ${answer.status} ${JSON.stringify(answer.body)}`)
  return answer.body
}

/**
 * Test mode (issue #55): a test key for the scenes' merchant (the keys view lists it beside the live
 * one), and test invoices made with it, one paid in part through the test helpers, for the
 * dashboard's test data view and the payer page's test banner.
 */
const makeTestScenes = async ({ merchant }: Scenes): Promise<TestScenes> => {
  const key = succeeded("test key", await merchant.dashboard(`/api/users/${merchant.merchantId}/checkout-api-key`, { body: { label: "Staging shop", mode: "test" } }))
  const withTestKey = { "x-api-key": key.rawKey as string }
  const create = async (productName: string, amountUsd: number, merchantReference: string) =>
    succeeded(`create ${productName}`, await merchant.api("/api/checkout/invoices", { body: { amountUsd, productName, merchantReference }, headers: withTestKey }))
  const awaiting = await create("Test order: mug", 12.5, "test-2001")
  const partial = await create("Test order: apron", 40, "test-2002")
  const option = partial.paymentOptions.find((candidate: { assetCode: string }) => candidate.assetCode === "USDT") ?? partial.paymentOptions[0]
  succeeded("test payment", await merchant.api(`/api/checkout/test-helpers/invoices/${partial.id}/pay`, {
    body: { paymentOptionId: option.id, amount: (option.quotedAmount / 2).toFixed(2), confirmations: 100 },
    headers: withTestKey
  }))
  return { awaiting: awaiting.id }
}

/** Dashboard views drawn again with test data shown (the switch on, the banner under the header). */
const testDataViews = [
  { name: "invoices-test-data", hash: "#/invoices", heading: "Invoices" },
  { name: "keys-test-data", hash: "#/keys", heading: "API keys" }
]
const { chromium } = await import("playwright-core")
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"] })
const failures: Array<string> = []
try {
  const scenes = await makeScenes(app)
  const payerViews = await payerScenes(scenes, await makeTestScenes(scenes))
  for (const size of Object.keys(SIZES) as Array<Size>) {
    // The payer's page: no session, in each state a payer can find it.
    const payer = await signedInPage(browser, app, null, size)
    for (const view of payerViews) {
      await payer.page.goto(`${app.baseUrl}/pay/${view.id}`)
      await payer.page.locator(`.status-${view.status}`).waitFor()
      await payer.page.waitForLoadState("networkidle")
      await view.prepare?.(payer.page)
      const height = Math.min(await payer.page.evaluate(() => document.documentElement.scrollHeight), SIZES[size].height * 3)
      await payer.page.screenshot({ path: join(directory, `pay-${view.name}-${size}.png`), clip: { x: 0, y: 0, width: SIZES[size].width, height }, fullPage: true })
      failures.push(...payer.problems.splice(0).map((problem) => `pay-${view.name} ${size}: ${problem}`))
    }
    await payer.context.close()
    if (payOnly) continue

    // The login screen, before anyone is signed in.
    const anonymous = await signedInPage(browser, app, null, size)
    await anonymous.page.goto(`${app.baseUrl}/dashboard#/login`)
    await anonymous.page.getByRole("heading", { name: "Log in" }).waitFor()
    await anonymous.page.screenshot({ path: join(directory, `login-${size}.png`) })
    failures.push(...anonymous.problems.map((problem) => `login ${size}: ${problem}`))
    await anonymous.context.close()

    const { context, page, problems } = await signedInPage(browser, app, scenes.merchant, size)
    for (const view of views(scenes)) {
      await page.goto(`${app.baseUrl}/dashboard${view.hash}`)
      await page.getByRole("heading", { name: view.heading, exact: true }).waitFor()
      await page.waitForLoadState("networkidle")
      // The whole page, up to three screens tall (the rest of a long invoice page adds nothing new).
      const height = Math.min(await page.evaluate(() => document.documentElement.scrollHeight), SIZES[size].height * 3)
      await page.screenshot({ path: join(directory, `${view.name}-${size}.png`), clip: { x: 0, y: 0, width: SIZES[size].width, height }, fullPage: true })
      failures.push(...problems.splice(0).map((problem) => `${view.name} ${size}: ${problem}`))
    }
    await page.getByRole("switch", { name: "Viewing test data" }).check()
    for (const view of testDataViews) {
      await page.goto(`${app.baseUrl}/dashboard${view.hash}`)
      await page.getByRole("heading", { name: view.heading, exact: true }).waitFor()
      await page.locator("#test-banner").waitFor()
      await page.waitForLoadState("networkidle")
      const height = Math.min(await page.evaluate(() => document.documentElement.scrollHeight), SIZES[size].height * 3)
      await page.screenshot({ path: join(directory, `${view.name}-${size}.png`), clip: { x: 0, y: 0, width: SIZES[size].width, height }, fullPage: true })
      failures.push(...problems.splice(0).map((problem) => `${view.name} ${size}: ${problem}`))
    }
    await context.close()
  }
} finally {
  await browser.close()
  await app.close()
}
const files = readdirSync(directory).filter((name) => name.endsWith(".png"))
const bytes = files.reduce((total, name) => total + statSync(join(directory, name)).size, 0)
console.log(`wrote ${files.length} screenshots to docs/screenshots/ (${(bytes / 1024 / 1024).toFixed(2)} MB)`)
if (failures.length > 0) {
  console.error(failures.join("\n"))
  process.exit(1)
}
