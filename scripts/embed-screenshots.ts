/**
 * Screenshots of the embedded checkout (checkout.js's modal over a shop's page, issue #57) at a
 * phone's and a desktop's size, into docs/screenshots/embed-modal-{phone,desktop}.png, from a
 * throwaway app (in-memory database) and a shop page on another loopback port:
 *
 *   node_modules/.bin/node --experimental-strip-types --disable-warning=ExperimentalWarning scripts/embed-screenshots.ts
 *
 * Separate from scripts/screenshots.ts, which redraws every other screenshot.
 */
import { existsSync } from "node:fs"
import { join } from "node:path"
import { loadCheckoutScript } from "../src/pay/CheckoutScript.ts"
import { serveOrigin, shopPage } from "../test/support/ShopPages.ts"
import { startTestApp } from "../test/support/TestApp.ts"

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
if (!existsSync(CHROMIUM)) {
  console.error(`no browser at ${CHROMIUM} (apt-get install -y chromium)`)
  process.exit(1)
}
const SIZES = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 800 } } as const
const directory = join(import.meta.dirname, "..", "docs", "screenshots")

const app = await startTestApp()
const script = await loadCheckoutScript()
const shop = await serveOrigin(shopPage({ src: `${app.baseUrl}/checkout.js?v=${script.version}`, integrity: script.integrity }))
const merchant = await app.createMerchant()
const settings = await merchant.dashboard("/api/dashboard/checkout-settings")
await merchant.dashboard("/api/dashboard/checkout-settings", { method: "PUT", body: { ...settings.body, embedOrigins: [shop.origin] } })
const { chromium } = await import("playwright-core")
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"] })
try {
  for (const [size, viewport] of Object.entries(SIZES)) {
    const invoice = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 20, productName: "Tea set" } })
    const page = await browser.newPage({ viewport })
    await page.goto(`${shop.origin}/?${new URLSearchParams({ pay: `${app.baseUrl}/pay/${invoice.body.id}` })}`)
    await page.getByRole("button", { name: "Pay with crypto" }).click()
    await page.frameLocator("iframe[title='Payment page']").locator("figure.qr svg").first().waitFor()
    await page.screenshot({ path: join(directory, `embed-modal-${size}.png`) })
    await page.close()
  }
} finally {
  await browser.close()
  await shop.close()
  await app.close()
}
console.log("wrote docs/screenshots/embed-modal-phone.png and embed-modal-desktop.png")
