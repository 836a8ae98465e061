import { existsSync, readFileSync } from "node:fs"
import { HDKey } from "@scure/bip32"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { REFUND_WEBHOOK_EVENT_NAMES, WEBHOOK_EVENT_NAMES } from "../../src/domain/Statuses.ts"
import { verifyWebhookSignature } from "../../src/webhooks/Signature.ts"
import { publicRequest, startTestApp, type TestApp } from "../support/TestApp.ts"
import { startWebhookReceiver, type WebhookReceiver } from "../support/WebhookReceiver.ts"

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const available = existsSync(CHROMIUM)
if (!available) console.log(`dashboard e2e: skipped, no browser at ${CHROMIUM} (apt-get install -y chromium)`)

let app: TestApp
let browser: Browser
let receiver: WebhookReceiver

const json = (method: string, body: unknown, headers: Record<string, string> = {}) => ({
  method,
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body)
})

describe.skipIf(!available)("the merchant dashboard", () => {
  beforeAll(async () => {
    // Background workers on: the webhook dispatcher delivers on its own, as in production.
    app = await startTestApp({ role: "all", webhookPollIntervalMs: 100 })
    receiver = await startWebhookReceiver()
    receiver.on("/hooks", (response) => response.writeHead(200).end("thanks"))
    const { chromium } = await import("playwright-core")
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"] })
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await receiver?.close()
    await app?.close()
  })

  it("keeps the page the merchant went to when the page left answers late", async () => {
    const merchant = await app.createMerchant()
    const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 4 } })
    expect(created.status).toBe(201)
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    await context.addCookies([
      { name: "checkout_session", value: merchant.sessionToken, url: app.baseUrl },
      { name: "checkout_csrf", value: merchant.csrfToken, url: app.baseUrl }
    ])
    await context.addInitScript((id) => localStorage.setItem("checkout.userId", id), merchant.merchantId)
    const page = await context.newPage()
    // The webhooks page's settings are held back until the merchant has moved on to an invoice.
    let release = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    const asked = new Promise<void>((resolve) =>
      void page.route("**/api/dashboard/webhook-settings", async (route) => {
        resolve()
        await held
        await route.continue()
      })
    )
    await page.goto(`${app.baseUrl}/dashboard#/webhooks`)
    await asked
    await page.evaluate((id) => (location.hash = `#/invoices/${id}`), created.body.id as string)
    await page.getByRole("button", { name: "Void" }).waitFor()
    const answered = page.waitForResponse("**/api/dashboard/webhook-settings")
    release()
    await answered
    // The late answer has had its chance to draw (it would within a few ms).
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 300)))
    expect(await page.getByRole("button", { name: "Void" }).isVisible()).toBe(true)
    expect(await page.getByRole("heading", { name: "Webhooks" }).count()).toBe(0)
    await context.close()
  })

  it("a redelivery answered after the merchant left the webhooks page raises no error there", async () => {
    const merchant = await app.createMerchant()
    expect((await merchant.dashboard("/api/dashboard/webhook-settings", json("PUT", { url: receiver.url("/late"), enabledEvents: ["invoice_created"] }))).status).toBe(200)
    expect((await merchant.dashboard("/api/dashboard/webhook-settings/secret", json("POST", {}))).status).toBeLessThan(300)
    receiver.on("/late", (response) => response.writeHead(200).end("thanks"))
    const created = await merchant.api("/api/checkout/invoices", json("POST", { amountUsd: 4 }))
    expect(created.status).toBe(201)
    for (let i = 0; i < 100 && receiver.received("/late").length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 100))
    expect(receiver.received("/late")).toHaveLength(1)
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    await context.addCookies([
      { name: "checkout_session", value: merchant.sessionToken, url: app.baseUrl },
      { name: "checkout_csrf", value: merchant.csrfToken, url: app.baseUrl }
    ])
    await context.addInitScript((id) => localStorage.setItem("checkout.userId", id), merchant.merchantId)
    const page = await context.newPage()
    const problems: Array<string> = []
    page.on("pageerror", (error) => problems.push(error.message))
    page.on("dialog", (dialog) => {
      problems.push(`dialog: ${dialog.message()}`)
      void dialog.dismiss()
    })
    // The redelivery's answer is held back until the merchant has moved on to the invoice.
    let release = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    const asked = new Promise<void>((resolve) =>
      void page.route("**/redeliver", async (route) => {
        resolve()
        await held
        await route.continue()
      })
    )
    await page.goto(`${app.baseUrl}/dashboard#/webhooks`)
    await page.getByRole("button", { name: "Redeliver" }).click()
    await asked
    await page.evaluate((id) => (location.hash = `#/invoices/${id}`), created.body.id as string)
    await page.getByRole("button", { name: "Void" }).waitFor()
    const answered = page.waitForResponse("**/redeliver")
    release()
    expect((await answered).status()).toBe(200)
    // decisions.md (Superseded): the answer is dropped, the write itself still happens.
    expect(receiver.received("/late")).toHaveLength(2)
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 300)))
    expect(problems).toEqual([])
    expect(await page.getByRole("button", { name: "Void" }).isVisible()).toBe(true)
    await context.close()
  })

  it("walks a new merchant from sign-up to a reviewed exception, a redelivered webhook and a CSV export, at 360 px", async () => {
    const context = await browser.newContext({ viewport: { width: 360, height: 800 }, acceptDownloads: true, permissions: ["clipboard-read", "clipboard-write"] })
    const page: Page = await context.newPage()
    const problems: Array<string> = []
    page.on("pageerror", (error) => problems.push(error.message))
    page.on("console", (message) => {
      if (message.type() === "error" && !/status of 4\d\d/.test(message.text())) problems.push(message.text())
    })
    const email = `${crypto.randomUUID()}@merchant.test`
    const password = "correct horse battery staple"

    // Sign up: the new account lands on its checkout settings.
    await page.goto(`${app.baseUrl}/dashboard#/signup`)
    await page.getByLabel("Email").fill(email)
    await page.getByLabel("Password").fill(password)
    await page.getByRole("button", { name: "Sign up" }).click()
    await page.getByRole("heading", { name: "Checkout settings" }).waitFor()
    await page.getByText("No payment methods yet").waitFor()

    // A bad xpub: the server's error appears next to that field; fixed, the settings save.
    await page.getByRole("button", { name: "Add a method" }).click()
    const xpub = page.locator("input[name='paymentMethods[0].xpub']")
    await xpub.fill("xpub-not-a-key")
    await page.getByRole("button", { name: "Save settings" }).click()
    const fieldError = page.locator("input[name='paymentMethods[0].xpub'] + .field-error")
    await fieldError.waitFor()
    expect(await fieldError.textContent()).toBe("paymentMethods[0].xpub must be a mainnet account xpub (m/44'/60'/0')")
    expect(await xpub.getAttribute("aria-invalid")).toBe("true")
    // A key no address was issued from in this database: the page says plainly what could happen
    // (issue #56); a start index past the other database's addresses silences it.
    const freshKey = HDKey.fromMasterSeed(crypto.getRandomValues(new Uint8Array(32))).derive("m/44'/60'/0'").publicExtendedKey
    await xpub.fill(freshKey)
    await page.getByRole("button", { name: "Save settings" }).click()
    await page.getByText("Settings saved.").waitFor()
    const reuseWarning = page.getByRole("alert").filter({ hasText: `No deposit address has been issued from ${freshKey} in this database` })
    await reuseWarning.waitFor()
    expect(await reuseWarning.textContent()).toContain("they will be issued again from index 0")
    await page.locator("input[name='paymentMethods[0].startIndex']").fill("40")
    await page.getByRole("button", { name: "Save settings" }).click()
    await reuseWarning.waitFor({ state: "detached" })
    await page.reload()
    await page.getByRole("heading", { name: "Checkout settings" }).waitFor()
    expect(await page.locator("input[name='paymentMethods[0].startIndex']").getAttribute("placeholder")).toBe("40")
    expect(await page.getByRole("alert").count()).toBe(0)

    // An API key, shown once with a copy button.
    await page.getByRole("navigation").getByRole("link", { name: "API keys" }).click()
    await page.getByRole("button", { name: "Create API key" }).click()
    const rawKey = (await page.locator("#new-key").textContent())!
    expect(rawKey).toMatch(/^svc_live_/)
    await page.getByRole("button", { name: "Copy" }).click()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(rawKey)
    await page.getByText(`${rawKey.slice(0, 12)}`).first().waitFor()

    // The merchant's server creates an invoice with the key (as curl would); it appears in the list.
    const created = await publicRequest(app.baseUrl, "/api/checkout/invoices", json("POST", {
      amountUsd: 12.5,
      productName: "Ceramic mug",
      merchantReference: "=HYPERLINK(\"http://x\")"
    }, { "x-api-key": rawKey }))
    expect(created.status).toBe(201)
    const invoice = created.body
    await page.getByRole("navigation").getByRole("link", { name: "Invoices" }).click()
    await page.getByRole("link", { name: "Ceramic mug" }).waitFor()

    // A late payment (development simulator, as a chain would report it) opens an exception.
    const login = await publicRequest(app.baseUrl, "/api/auth/login", json("POST", { email, password }))
    const bearer = { authorization: `Bearer ${login.body.token}` }
    expect((await publicRequest(app.baseUrl, `/api/dev/invoices/${invoice.id}/simulate-expiry`, json("POST", {}, bearer))).status).toBe(200)
    const option = invoice.paymentOptions[0]
    const late = await publicRequest(app.baseUrl, `/api/dev/invoices/${invoice.id}/simulate-payment`, json("POST", {
      paymentOptionId: option.id,
      amount: String(option.quotedAmount),
      confirmations: 100,
      late: true
    }, bearer))
    expect(late.status).toBe(200)
    expect(late.body.invoice).toMatchObject({ exceptionType: "late_payment", exceptionStatus: "open" })

    // Closed from the queue, with the required note.
    await page.getByRole("navigation").getByRole("link", { name: "Exceptions" }).click()
    await page.getByRole("link", { name: "Ceramic mug" }).waitFor()
    await page.getByLabel("Close with").selectOption("accept_late_payment")
    await page.getByLabel("Note (required)").fill("Paid ten minutes late; accepted")
    await page.getByRole("button", { name: "Close exception" }).click()
    await page.getByText("Nothing to review.").waitFor()
    const detail = await publicRequest(app.baseUrl, `/api/dashboard/invoices/${invoice.id}`, { headers: bearer })
    expect(detail.body.invoice).toMatchObject({ status: "confirmed", exceptionStatus: "closed", exceptionAction: "accept_late_payment" })

    // Webhooks: URL and secret (shown once); the next event is delivered, visible, and redelivered.
    await page.getByRole("navigation").getByRole("link", { name: "Webhooks" }).click()
    await page.getByLabel("Endpoint URL").waitFor()
    expect(await page.locator("input[name='enabledEvents']").evaluateAll((inputs) => inputs.map((input) => (input as HTMLInputElement).value)))
      .toEqual([...WEBHOOK_EVENT_NAMES, ...REFUND_WEBHOOK_EVENT_NAMES])
    // The refund events are opt-in: a merchant without saved settings has the spec's nine checked.
    expect(await page.locator("input[name='enabledEvents']:checked").evaluateAll((inputs) => inputs.map((input) => (input as HTMLInputElement).value)))
      .toEqual([...WEBHOOK_EVENT_NAMES])
    await page.getByLabel("Endpoint URL").fill(receiver.url("/hooks"))
    await page.getByRole("button", { name: "Save webhook settings" }).click()
    await page.getByText("Webhook settings saved.").waitFor()
    await page.getByRole("button", { name: "Create secret" }).click()
    const secret = (await page.locator("#new-secret").textContent())!
    expect(secret).toMatch(/^whsec_/)
    receiver.on("/hooks", (response) => response.writeHead(200).end("thanks"))
    await page.getByRole("button", { name: "Send a test event" }).click()
    await page.getByText(/^Test event delivered: HTTP 200 in \d+ ms$/).waitFor()
    const test = receiver.received("/hooks").at(-1)!
    expect(JSON.parse(test.body)).toEqual({ event: "webhook_test", livemode: true, invoice: null })
    expect(verifyWebhookSignature(test.body, test.headers["x-checkout-signature"] as string, secret)).toBe(true)
    const receivedBefore = receiver.received("/hooks").length
    const second = await publicRequest(app.baseUrl, "/api/checkout/invoices", json("POST", { amountUsd: 3, productName: "Spoon" }, { "x-api-key": rawKey }))
    expect(second.status).toBe(201)
    for (let i = 0; i < 100 && receiver.received("/hooks").length === receivedBefore; i++) await new Promise((resolve) => setTimeout(resolve, 100))
    expect(receiver.received("/hooks")).toHaveLength(receivedBefore + 1)
    const deliveryId = receiver.received("/hooks").at(-1)!.headers["x-checkout-delivery"] as string
    await page.reload()
    const row = page.locator(`tr[data-delivery='${deliveryId}']`)
    await row.waitFor()
    await row.getByRole("button", { name: "Redeliver" }).click()
    for (let i = 0; i < 50 && receiver.received("/hooks").length < receivedBefore + 2; i++) await new Promise((resolve) => setTimeout(resolve, 100))
    expect(receiver.received("/hooks").slice(receivedBefore).map((request) => request.headers["x-checkout-delivery"])).toEqual([deliveryId, deliveryId])

    // Void from the invoice's page (a cookie-authenticated write with the CSRF token).
    page.once("dialog", (dialog) => void dialog.accept())
    await page.goto(`${app.baseUrl}/dashboard#/invoices/${second.body.id}`)
    await page.getByRole("button", { name: "Void" }).click()
    await page.getByText("Voided", { exact: true }).first().waitFor()
    expect((await publicRequest(app.baseUrl, `/api/checkout/invoices/${second.body.id}`, { headers: { "x-api-key": rawKey } })).body.status).toBe("voided")

    // A deposit of the wrong token to its address, as the EVM watcher records one, is shown (not counted).
    await app.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`INSERT INTO unmatched_deposits ${
        sql.insert({
          id: crypto.randomUUID(),
          merchant_id: login.body.user.id,
          invoice_id: second.body.id,
          network: "arbitrum",
          asset_code: "USDC",
          token_contract: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831",
          to_address: second.body.paymentOptions[0].destinationAddress ?? "0x0",
          transaction_hash: `0x${"ab".repeat(32)}`,
          output_index: 0,
          amount_atomic: "3000000",
          chain_time: new Date(),
          reason: "wrong_token",
          detected_at: new Date()
        })
      }`))
    await page.reload()
    await page.getByRole("heading", { name: "Unmatched deposits (not counted)" }).waitFor()
    await page.getByText("wrong_token").waitFor()

    // The CSV export, downloaded as a file and parsed; the formula-like reference is defused.
    await page.getByRole("navigation").getByRole("link", { name: "Invoices" }).click()
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Export CSV" }).click()])
    const csv = readFileSync((await download.path())!, "utf8")
    const lines = csv.trimEnd().split("\r\n")
    expect(lines[0].startsWith("id,createdAt,status,amountUsd")).toBe(true)
    expect(lines).toHaveLength(3)
    expect(csv).toContain(`${invoice.id},`)
    expect(csv).toContain("\"'=HYPERLINK(\"\"http://x\"\")\"")

    // A cookie-authenticated write without the CSRF token is refused, even from the page itself.
    const refused = await page.evaluate(async (userId) => {
      const response = await fetch(`/api/users/${userId}/checkout-api-key`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
      return { status: response.status, body: await response.json() }
    }, login.body.user.id)
    expect(refused).toEqual({ status: 403, body: { error: "Missing or invalid CSRF token: send the checkout_csrf cookie's value in X-CSRF-Token" } })

    // The lifecycle statechart, and nothing wider than the phone.
    await page.getByRole("navigation").getByRole("link", { name: "Lifecycle" }).click()
    const chart = page.getByRole("img", { name: /Statechart of the invoice statuses/ })
    await chart.waitFor()
    expect((await chart.boundingBox())!.width).toBeGreaterThan(0)
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360)

    // Keyboard: the navigation is reachable by Tab (from the top of the page: the chart's zoom buttons follow the heading) and followed by Enter.
    await page.locator("header .brand").click()
    await page.keyboard.press("Tab")
    await page.keyboard.press("Enter")
    await page.getByRole("heading", { name: "Invoices" }).waitFor()

    await page.getByRole("button", { name: "Log out" }).click()
    await page.getByRole("heading", { name: "Log in" }).waitFor()
    expect(problems).toEqual([])
    await context.close()
  }, 120_000)
})
