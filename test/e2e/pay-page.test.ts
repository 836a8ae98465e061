import { existsSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
import { base58 } from "@scure/base"
import { Keypair } from "@solana/web3.js"
import { Effect } from "effect"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { type Address, getAddress } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ChainWatchers } from "../../src/chains/ChainWatchers.ts"
import { DEMO_KEYS } from "../../src/demo/DemoMerchant.ts"
import { bundleScript, SCRIPT_BUDGET_BYTES, SCRIPT_BUDGET_COMPRESSED_BYTES } from "../../src/pay/PayAssets.ts"
import { type AnvilNode, startAnvil } from "../support/Anvil.ts"
import { signPrepared, type SolanaNode, startSolanaNode } from "../support/SolanaRpc.ts"
import { decodeQrSvg } from "../support/QrRaster.ts"
import { startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import type { JsonBody } from "../support/Json.ts"

/** What the test exposes to the page (`page.exposeFunction`): its wallets' keys stay in the test. */
type TestWindow = Window & {
  readonly anvilRequest: (method: string, params: unknown) => Promise<unknown>
  readonly solanaSignAndSend: (transaction: Array<number>) => Promise<Array<number>>
}

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const available = existsSync(CHROMIUM)
if (!available) console.log(`pay-page e2e: skipped, no browser at ${CHROMIUM} (apt-get install -y chromium)`)
const SCREENSHOTS = join(import.meta.dirname, "screenshots")
const USDC: Address = getAddress("0x00000000000000000000000000000000000a11ce")

let app: TestApp
let anvil: AnvilNode
let solanaNode: SolanaNode
const SOLANA_USDC = Keypair.generate().publicKey
const SOLANA_RECIPIENT = Keypair.generate().publicKey
let browser: Browser
let merchant: TestMerchant
let baseOnly: TestMerchant
/** The wallet-contract rail on base as the default option, an address-transfer option beside it. */
let contractFirst: TestMerchant
const CONTRACT_RECIPIENT = getAddress("0x9858effd232b4033e47d90003d41ec34ecaeda94")
/** The sizes the page is designed for: a phone (mobile first) and a desktop (two columns). */
const PHONE = { width: 390, height: 844 }
const DESKTOP = { width: 1280, height: 800 }
const txHash = (digit: string) => `0x${digit.repeat(64)}`

const newInvoice = async (body: Record<string, unknown> = {}, by: TestMerchant = merchant) => {
  const created = await by.api("/api/checkout/invoices", { body: { amountUsd: 20, productName: "Tea set", billTo: "Ada Lovelace", ...body } })
  expect(created.status).toBe(201)
  return created.body as { id: string; paymentOptions: Array<JsonBody> }
}

const simulate = async (invoiceId: string, action: string, body: Record<string, unknown>, by: TestMerchant = merchant) => {
  const response = await by.dashboard(`/api/dev/invoices/${invoiceId}/${action}`, { body })
  expect(response.status, JSON.stringify(response.body)).toBe(200)
  return response.body
}

/** A page of the hosted checkout with its requests, console errors and CSP violations recorded. */
const open = async (path: string, options: { width?: number; height?: number; language?: string } = {}) => {
  const context: BrowserContext = await browser.newContext({
    viewport: { width: options.width ?? PHONE.width, height: options.height ?? PHONE.height },
    locale: options.language ?? "en-US",
    permissions: ["clipboard-read", "clipboard-write"]
  })
  const page: Page = await context.newPage()
  const requests: Array<string> = []
  const problems: Array<string> = []
  page.on("request", (request) => requests.push(request.url()))
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(message.text())
  })
  page.on("pageerror", (error) => problems.push(error.message))
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) => console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`))
  })
  const response = await page.goto(`${app.baseUrl}${path}`)
  return { context, page, requests, problems, response }
}

const shot = (page: Page, name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true, animations: "disabled", caret: "initial" })

const noOverflow = async (page: Page) => expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(page.viewportSize()!.width)

describe.skipIf(!available)("the hosted payment page", () => {
  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true })
    anvil = await startAnvil({ chainId: 1 })
    await anvil.installToken(USDC)
    await anvil.mint(USDC, anvil.accounts[1], 10n ** 12n)
    solanaNode = await startSolanaNode()
    solanaNode.installMint(SOLANA_USDC, 6, Keypair.generate().publicKey)
    app = await startTestApp({}, {
      CHECKOUT_RPC_URL_SOLANA: solanaNode.url,
      CHECKOUT_TOKEN_SOLANA_USDC: SOLANA_USDC.toBase58(),
      CHECKOUT_RPC_URL_ETHEREUM: anvil.rpcUrl,
      CHECKOUT_TOKEN_ETHEREUM_USDC: USDC,
      CHECKOUT_CONFIRMATIONS_ETHEREUM: "2",
      CHECKOUT_CONFIRMATIONS_BASE: "3"
    })
    merchant = await app.createMerchant({
      methods: [
        { network: "ethereum", assetCode: "USDC", railType: "address_transfer", enabled: true, isDefault: true, recipientAddress: null, xpub: DEMO_KEYS.evmXpub },
        { network: "base", assetCode: "USDC", railType: "address_transfer", enabled: true, isDefault: false, recipientAddress: null, xpub: DEMO_KEYS.evmXpub },
        { network: "solana", assetCode: "USDC", railType: "address_transfer", enabled: true, isDefault: false, recipientAddress: SOLANA_RECIPIENT.toBase58(), xpub: null }
      ]
    })
    baseOnly = await app.createMerchant({
      methods: [{ network: "base", assetCode: "USDC", railType: "address_transfer", enabled: true, isDefault: true, recipientAddress: null, xpub: DEMO_KEYS.evmXpub }]
    })
    contractFirst = await app.createMerchant({
      methods: [
        { network: "base", assetCode: "USDC", railType: "wallet_contract", enabled: true, isDefault: true, recipientAddress: CONTRACT_RECIPIENT, xpub: null },
        { network: "ethereum", assetCode: "USDC", railType: "address_transfer", enabled: true, isDefault: false, recipientAddress: null, xpub: DEMO_KEYS.evmXpub }
      ]
    })
    await app.run(Effect.flatMap(ChainWatchers, (watchers) => watchers.poll("ethereum")))
    await app.run(Effect.flatMap(ChainWatchers, (watchers) => watchers.poll("solana")))
    const { chromium } = await import("playwright-core")
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] })
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await app?.close()
    await anvil?.stop()
    await solanaNode?.close()
  })

  it("keeps the page's script within its budget", async () => {
    const script = await bundleScript()
    expect(script.length).toBeLessThanOrEqual(SCRIPT_BUDGET_BYTES)
    expect(gzipSync(script).length).toBeLessThanOrEqual(SCRIPT_BUDGET_COMPRESSED_BYTES)
  })

  it("shows an unpaid invoice with its default option first, switches options, copies the address, at 360 px, from its own origin only", async () => {
    const invoice = await newInvoice()
    const { context, page, requests, problems, response } = await open(`/pay/${invoice.id}`, { width: 360 })
    try {
      expect(response!.status()).toBe(200)
      const headers = response!.headers()
      expect(headers["content-security-policy"]).toContain("script-src 'self'")
      expect(headers["referrer-policy"]).toBe("no-referrer")
      expect(headers["x-content-type-options"]).toBe("nosniff")
      await expect.poll(() => page.locator("time.countdown").textContent()).toMatch(/^\d+:\d\d$/)
      await expect.poll(() => page.locator("h1").textContent()).toBe("Tea set")
      expect(await page.locator(".bill-to").textContent()).toContain("Ada Lovelace")
      expect(await page.locator(".amount").textContent()).toBe("$20.00")
      const tabs = page.locator(".option-tab")
      expect(await tabs.first().textContent()).toBe("USDC · Ethereum")
      const ethereum = invoice.paymentOptions.find((option) => option.network === "ethereum")
      const base = invoice.paymentOptions.find((option) => option.network === "base")
      expect(await page.locator(`#option-${ethereum.id}`).isVisible()).toBe(true)
      expect(await page.locator(`#option-${ethereum.id} .qr svg`).count()).toBe(1)
      expect(await page.locator(`#option-${ethereum.id} a.button`).getAttribute("href")).toBe(ethereum.paymentUri)

      await page.locator(`.option-tab[data-option-id="${base.id}"]`).click()
      expect(await page.locator(`#option-${base.id}`).isVisible()).toBe(true)
      expect(await page.locator(`#option-${ethereum.id}`).isVisible()).toBe(false)
      // The payer's own pick is kept in the address (history.replaceState: no navigation, issue #47).
      expect(page.url()).toContain(`?option=${base.id}`)

      await page.locator(`#option-${base.id} .address button.copy`).click()
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(base.destinationAddress)
      await noOverflow(page)
      await shot(page, "awaiting_payment-360px")
      expect(requests.every((url) => url.startsWith(app.baseUrl)), requests.join("\n")).toBe(true)
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }
  })

  it("is readable without JavaScript and answers an unknown invoice with an HTML 404 page", async () => {
    const invoice = await newInvoice()
    const context = await browser.newContext({ javaScriptEnabled: false })
    try {
      const page = await context.newPage()
      await page.goto(`${app.baseUrl}/pay/${invoice.id}`)
      expect(await page.locator(".amount").textContent()).toBe("$20.00")
      expect(await page.locator("section.option:not([hidden]) .address code").textContent()).toMatch(/^0x/)
      const missing = await page.goto(`${app.baseUrl}/pay/00000000-0000-4000-8000-000000000000`)
      expect(missing!.status()).toBe(404)
      expect(missing!.headers()["content-type"]).toContain("text/html")
      expect(await page.locator("h1").textContent()).toBe("Invoice not found")
    } finally {
      await context.close()
    }
  })

  it("follows the invoice live on a phone: the paid option kept with what remains in it, the paid network's confirmations, explorer links, a receipt and back to the shop", async () => {
    const invoice = await newInvoice({ redirectUrl: `${app.baseUrl}/api/health` })
    const ethereum = invoice.paymentOptions.find((option) => option.network === "ethereum")
    const base = invoice.paymentOptions.find((option) => option.network === "base")
    const [first, second] = [txHash("a"), txHash("b")]
    // Opened on the default option (ethereum); the payer pays part of it on base.
    const { context, page, requests, problems } = await open(`/pay/${invoice.id}`)
    try {
      expect(await page.locator(`#option-${ethereum.id}`).isVisible()).toBe(true)
      await simulate(invoice.id, "simulate-payment", { paymentOptionId: base.id, amount: "5", confirmations: 0, transactionHash: first })
      // The page polls its status and shows the change without a manual reload.
      await page.locator(".status-partially_paid").waitFor({ timeout: 15_000 })
      expect(await page.locator(".status .received").textContent()).toBe("$5.00")
      expect(await page.locator(".status .remaining").textContent()).toBe("$15.00")
      // The option that was paid is the one shown, with what was received in it and what remains.
      expect(await page.locator(`#option-${base.id}`).isVisible()).toBe(true)
      expect(await page.locator(`#option-${ethereum.id}`).isVisible()).toBe(false)
      // It leads; the other networks fold behind "Pay the rest another way" (issue #47).
      expect(await page.locator(`.pay-options > .option-group #option-${base.id}`).count()).toBe(1)
      expect(await page.locator("details.other-options > summary").textContent()).toBe("Pay the rest another way")
      expect(await page.locator("details.other-options").getAttribute("open")).toBeNull()
      // Shown in place: the page's address stays as it was opened (no navigation, issue #47).
      expect(page.url()).toBe(`${app.baseUrl}/pay/${invoice.id}`)
      expect(await page.locator(`#option-${base.id} .option-received`).textContent()).toBe("5 USDC")
      expect(await page.locator(`#option-${base.id} .option-remaining`).textContent()).toBe("15 USDC")
      expect(await page.locator(`#option-${base.id} .asset-amount`).textContent()).toBe("15 USDC")
      // QR and URI ask for exactly what remains.
      expect(await page.locator(`#option-${base.id} a.button`).getAttribute("href")).toContain("uint256=15000000")
      // The payment seen, linked to the network's public explorer.
      const link = page.locator(".transactions .tx-link")
      expect(await link.getAttribute("href")).toBe(`https://basescan.org/tx/${first}`)
      expect(await link.getAttribute("rel")).toBe("noopener noreferrer")
      expect(await page.locator(".transactions .transaction").textContent()).toContain("0 / 3 confirmations")
      await shot(page, "partially_paid")

      await simulate(invoice.id, "simulate-confirmations", { transactionHash: first, confirmations: 2 })
      await expect.poll(() => page.locator(".transactions .tx-count").textContent(), { timeout: 15_000 }).toBe("2")
      await simulate(invoice.id, "simulate-payment", { paymentOptionId: base.id, amount: "15", confirmations: 2, transactionHash: second })
      await page.locator(".status-payment_detected").waitFor({ timeout: 15_000 })
      // Base needs 3 here: not the largest requirement of all the options (solana's 32).
      expect(await page.locator(".status .detected").textContent()).toBe("Payment received on Base, waiting for confirmations (2 / 3 confirmations)")
      expect(await page.locator(".status .confirmation-progress").getAttribute("max")).toBe("3")
      expect(await page.locator(".transactions .tx-link").evaluateAll((links) => links.map((link) => link.getAttribute("href")))).toEqual([
        `https://basescan.org/tx/${first}`,
        `https://basescan.org/tx/${second}`
      ])
      expect(await page.locator("section.option").count()).toBe(0)
      await shot(page, "payment_detected")

      await simulate(invoice.id, "simulate-confirmations", { transactionHash: first, confirmations: 3 })
      await simulate(invoice.id, "simulate-confirmations", { transactionHash: second, confirmations: 3 })
      await page.locator(".status-confirmed").waitFor({ timeout: 15_000 })
      // Read at once: the page goes back to the shop a few seconds later.
      const paid = await page.evaluate(() => ({
        success: document.querySelector(".status .success")?.textContent,
        amount: document.querySelector(".receipt-amount")?.textContent,
        time: document.querySelector(".receipt-time time")?.getAttribute("datetime"),
        transactions: [...document.querySelectorAll(".receipt-tx a")].map((link) => link.getAttribute("href")),
        back: document.querySelector("a.return")?.getAttribute("href")
      }))
      expect(paid.success).toBe("Paid. Thank you!")
      expect(paid.amount).toContain("$20.00")
      expect(paid.amount).toContain("5 USDC on Base")
      expect(paid.amount).toContain("15 USDC on Base")
      expect(Number.isNaN(Date.parse(paid.time ?? ""))).toBe(false)
      expect(paid.transactions).toEqual([`https://basescan.org/tx/${first}`, `https://basescan.org/tx/${second}`])
      expect(paid.back).toBe(`${app.baseUrl}/api/health`)
      await page.waitForURL(`${app.baseUrl}/api/health`, { timeout: 10_000 })
      expect(requests.every((url) => url.startsWith(app.baseUrl))).toBe(true)
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }
  })

  it("makes every option payable from a phone: the wallet-contract default gets an EIP-681 transfer to its forwarder, with a QR code, icons, a warning and a readable address", async () => {
    const invoice = await newInvoice({}, contractFirst)
    const contract = invoice.paymentOptions.find((option) => option.railType === "wallet_contract")
    const transfer = invoice.paymentOptions.find((option) => option.railType === "address_transfer")
    expect(contract.isDefault).toBe(true)
    // The API keeps the spec's shape: no URI and no QR code for a wallet-contract option.
    const publicView = await merchant.api(`/api/checkout/pay/${invoice.id}`)
    const apiContract = publicView.body.paymentOptions.find((option: { id: string }) => option.id === contract.id)
    expect([apiContract.paymentUri, apiContract.qrCode]).toEqual([null, null])
    const payload = contract.optionPayload
    const forwarderUri = `ethereum:${payload.tokenContract}@8453/transfer?address=${payload.contractAddress}&uint256=${payload.paymentAmountAtomic}`
    const { context, page, requests, problems } = await open(`/pay/${invoice.id}`)
    try {
      for (const [option, uri, address, network] of [
        [contract, forwarderUri, payload.contractAddress, "Base"],
        [transfer, transfer.paymentUri, transfer.destinationAddress, "Ethereum"]
      ] as const) {
        await page.locator(`.option-tab[data-option-id="${option.id}"]`).click()
        const section = page.locator(`#option-${option.id}`)
        expect(await section.isVisible()).toBe(true)
        // Scannable and tappable: the QR code decodes to the URI the wallet link opens.
        expect(decodeQrSvg(await section.locator(".qr svg").evaluate((svg) => svg.outerHTML))).toBe(uri)
        expect(await section.locator("a.open-wallet").getAttribute("href")).toBe(uri)
        expect(await section.locator(".send-only").textContent()).toContain(`Send only USDC on ${network} to this address.`)
        // The address in groups of four, copied whole.
        const groups = await section.locator(".address-text span").allTextContents()
        expect(groups[0]).toBe("0x")
        expect(groups.slice(1).every((group) => group.length === 4)).toBe(true)
        expect(groups.join("")).toBe(address)
        expect(await section.locator(".address-text").textContent()).toBe(address)
        await section.locator(".address button.copy").click()
        expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(address)
      }
      // The token and the network are drawn inline (no request) next to their names.
      const tab = page.locator(`.option-tab[data-option-id="${contract.id}"]`)
      expect(await tab.textContent()).toBe("USDC · Base")
      expect(await tab.locator("svg.icon").evaluateAll((icons) => icons.map((icon) => icon.getAttribute("data-icon")))).toEqual(["USDC", "base"])
      await noOverflow(page)
      await shot(page, "wallet-contract-phone")
      expect(requests.every((url) => url.startsWith(app.baseUrl)), requests.join("\n")).toBe(true)
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }
  })

  it("lays the summary and the payment side by side on a desktop, one above the other on a phone", async () => {
    const invoice = await newInvoice({}, contractFirst)
    for (const size of [DESKTOP, PHONE]) {
      const { context, page, problems } = await open(`/pay/${invoice.id}`, size)
      try {
        await page.locator("section.option:not([hidden]) .qr svg").waitFor()
        const summary = (await page.locator(".summary").boundingBox())!
        const payment = (await page.locator(".payment").boundingBox())!
        if (size === DESKTOP) {
          expect(payment.x).toBeGreaterThanOrEqual(summary.x + summary.width)
          expect(Math.abs(payment.y - summary.y)).toBeLessThan(40)
          expect(summary.width).toBeGreaterThan(300)
          expect(payment.width).toBeGreaterThan(400)
          // The QR code and the address are on the first screen.
          const qr = (await page.locator("section.option:not([hidden]) .qr").boundingBox())!
          expect(qr.y + qr.height).toBeLessThanOrEqual(DESKTOP.height)
        } else {
          expect(payment.y).toBeGreaterThanOrEqual(summary.y + summary.height - 1)
          expect(Math.abs(payment.x - summary.x)).toBeLessThan(2)
        }
        await noOverflow(page)
        await shot(page, size === DESKTOP ? "awaiting_payment-desktop" : "awaiting_payment-phone")
        expect(problems).toEqual([])
      } finally {
        await context.close()
      }
    }
  })

  it("speaks Spanish in the new texts: the warning, the payments, the confirmations and the receipt", async () => {
    const invoice = await newInvoice({}, contractFirst)
    const contract = invoice.paymentOptions.find((option) => option.railType === "wallet_contract")
    const { context, page, problems } = await open(`/pay/${invoice.id}`, { language: "es-ES" })
    try {
      expect(await page.locator("section.option:not([hidden]) .send-only").textContent()).toContain("Envía solo USDC en Base a esta dirección.")
      await simulate(invoice.id, "simulate-payment", { paymentOptionId: contract.id, amount: "5", confirmations: 1, transactionHash: txHash("c") }, contractFirst)
      await page.locator(".status-partially_paid").waitFor({ timeout: 15_000 })
      expect(await page.locator(`#option-${contract.id} .option-progress`).textContent()).toBe("Recibido con esta forma de pago: 5 USDC · Falta enviar: 15 USDC")
      expect(await page.locator(".transactions-title").textContent()).toBe("Tus pagos")
      expect(await page.locator(".transactions .transaction").textContent()).toContain("1 / 3 confirmaciones")
      expect(await page.locator(".transactions .tx-link .visually-hidden").textContent()).toBe(" (Ver la transacción en el explorador de Base)")
      await simulate(invoice.id, "simulate-payment", { paymentOptionId: contract.id, amount: "15", confirmations: 1, transactionHash: txHash("d") }, contractFirst)
      await page.locator(".status-payment_detected").waitFor({ timeout: 15_000 })
      expect(await page.locator(".status .detected").textContent()).toBe("Pago recibido en Base, esperando confirmaciones (1 / 3 confirmaciones)")
      await simulate(invoice.id, "simulate-confirmations", { transactionHash: txHash("c"), confirmations: 3 }, contractFirst)
      await simulate(invoice.id, "simulate-confirmations", { transactionHash: txHash("d"), confirmations: 3 }, contractFirst)
      await page.locator(".status-confirmed").waitFor({ timeout: 15_000 })
      expect(await page.locator(".receipt-title").textContent()).toBe("Recibo")
      expect(await page.locator(".receipt dt").allTextContents()).toEqual(["Importe pagado", "Pagado el", "Transacción", "Factura"])
      expect(await page.locator(".receipt-amount").textContent()).toContain("5 USDC en Base")
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }
  })

  it("shows a paid invoice's receipt beside its summary on a desktop", async () => {
    const invoice = await newInvoice({}, contractFirst)
    const contract = invoice.paymentOptions.find((option) => option.railType === "wallet_contract")
    await simulate(invoice.id, "simulate-payment", { paymentOptionId: contract.id, amount: "20", confirmations: 3, transactionHash: txHash("e") }, contractFirst)
    const { context, page, problems } = await open(`/pay/${invoice.id}`, DESKTOP)
    try {
      await page.locator(".status-confirmed").waitFor()
      expect(await page.locator(".receipt-tx a").getAttribute("href")).toBe(`https://basescan.org/tx/${txHash("e")}`)
      const summary = (await page.locator(".summary").boundingBox())!
      const receipt = (await page.locator(".receipt").boundingBox())!
      expect(receipt.x).toBeGreaterThanOrEqual(summary.x + summary.width)
      await shot(page, "confirmed-desktop")
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }
  })

  it("takes its options away when the deadline passes while it is open, before the sweeper has run", async () => {
    const invoice = await newInvoice({ paymentTiming: { mode: "immediate", expiresAfterMinutes: 5 } })
    const context = await browser.newContext({ viewport: PHONE })
    const page = await context.newPage()
    const problems: Array<string> = []
    page.on("pageerror", (error) => problems.push(error.message))
    await page.clock.install()
    await page.goto(`${app.baseUrl}/pay/${invoice.id}`)
    await expect(page.locator("section.option:not([hidden])").count()).resolves.toBe(1)
    await page.clock.fastForward("04:50")
    await expect(page.locator("section.option:not([hidden])").count()).resolves.toBe(1)
    await page.clock.fastForward("00:15")
    await page.getByText("This invoice has expired. Do not send a payment to it").waitFor()
    expect(await page.locator("section.option:not([hidden]), nav.options:not([hidden])").count()).toBe(0)
    expect(problems).toEqual([])
    await context.close()
  })

  it("offers no way to pay an expired or voided invoice, and speaks Spanish when asked", async () => {
    // On base only: the ethereum watcher would rightly hold back expiry until its chain passes the deadline.
    const expired = await newInvoice({}, baseOnly)
    await simulate(expired.id, "simulate-expiry", {}, baseOnly)
    const voided = await newInvoice()
    expect((await merchant.api(`/api/checkout/invoices/${voided.id}/void`, { method: "POST", body: {} })).status).toBe(200)
    for (const [invoice, status] of [[expired, "expired"], [voided, "voided"]] as const) {
      const { context, page } = await open(`/pay/${invoice.id}`)
      try {
        await page.locator(`.status-${status}`).waitFor()
        expect(await page.locator("section.option, .qr, .address").count()).toBe(0)
        expect(await page.locator(".status .warning").textContent()).toContain("Do not send a payment")
        await shot(page, status)
      } finally {
        await context.close()
      }
    }
    const { context, page, response } = await open(`/pay/${expired.id}`, { language: "es-ES" })
    try {
      expect(response!.headers()["content-language"]).toBe("es")
      expect(await page.locator(".status .warning").textContent()).toContain("No envíes ningún pago")
    } finally {
      await context.close()
    }
  })

  it("pays with an injected EIP-1193 wallet: the token transfer reaches the chain and the invoice is detected", async () => {
    const invoice = await newInvoice()
    const ethereum = invoice.paymentOptions.find((option) => option.network === "ethereum")
    const payer = anvil.accounts[1]
    const { context, page, problems } = await open(`/pay/${invoice.id}`)
    try {
      // The test wallet: EIP-6963 announcement, its requests forwarded to anvil (whose accounts are unlocked).
      await page.exposeFunction("anvilRequest", async (method: string, params: unknown) => {
        if (method === "eth_requestAccounts") return [payer]
        if (method === "wallet_switchEthereumChain") return null
        const response = await fetch(anvil.rpcUrl, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params })
        })
        const body = await response.json()
        if (body.error !== undefined) throw new Error(body.error.message)
        return body.result
      })
      await page.evaluate(() => {
        const provider = { request: ({ method, params }: { method: string; params?: unknown }) => (window as unknown as TestWindow).anvilRequest(method, params) }
        window.addEventListener("eip6963:requestProvider", () =>
          window.dispatchEvent(new CustomEvent("eip6963:announceProvider", { detail: { info: { uuid: "test", name: "Test wallet", icon: "", rdns: "test.wallet" }, provider } })))
      })
      await page.locator(`#option-${ethereum.id} button[data-pay="evm"]`).click()
      await expect.poll(() =>
        page.locator(`#option-${ethereum.id} .wallet-status`).textContent(), { timeout: 15_000 }).toMatch(/0x[0-9a-f]{64}/)
      const report = await app.run(Effect.flatMap(ChainWatchers, (watchers) => watchers.poll("ethereum")))
      expect(report.evidence).toBe(1)
      await page.locator(".status-payment_detected").waitFor({ timeout: 15_000 })
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }
  })

  it("pays with a Wallet Standard Solana wallet: it signs the prepared transaction, sends it to the litesvm-backed RPC, and the invoice is detected", async () => {
    const invoice = await newInvoice()
    const solana = invoice.paymentOptions.find((option) => option.network === "solana")
    const payer = Keypair.generate()
    solanaNode.airdrop(payer.publicKey, 1_000_000_000n)
    solanaNode.setTokenBalance(payer.publicKey, SOLANA_USDC, 100_000_000n)
    const { context, page, problems } = await open(`/pay/${invoice.id}?option=${solana.id}`)
    try {
      // The test wallet's key stays in the test: the page hands it the prepared transaction's bytes.
      await page.exposeFunction("solanaSignAndSend", async (transaction: Array<number>) => {
        const signed = signPrepared(Buffer.from(transaction).toString("base64"), payer)
        return [...base58.decode(await solanaNode.connection.sendRawTransaction(signed.serialize()))]
      })
      await page.evaluate((publicKey) => {
        const account = { address: "payer", publicKey: new Uint8Array(publicKey), chains: ["solana:mainnet"], features: [] }
        const wallet = {
          version: "1.0.0",
          name: "Test Solana wallet",
          icon: "data:image/svg+xml;base64,PHN2Zy8+",
          chains: ["solana:mainnet"],
          accounts: [],
          features: {
            "standard:connect": { version: "1.0.0", connect: async () => ({ accounts: [account] }) },
            "solana:signAndSendTransaction": {
              version: "1.0.0",
              supportedTransactionVersions: ["legacy", 0],
              signAndSendTransaction: async (...inputs: Array<{ transaction: Uint8Array; chain: string }>) =>
                Promise.all(inputs.map(async (input) => ({ signature: new Uint8Array(await (window as unknown as TestWindow).solanaSignAndSend([...input.transaction])) })))
            }
          }
        }
        window.dispatchEvent(new CustomEvent("wallet-standard:register-wallet", { detail: ({ register }: { register: (wallet: unknown) => void }) => register(wallet) }))
      }, [...payer.publicKey.toBytes()])
      await page.locator(`#option-${solana.id} button[data-pay="solana"]`).click()
      await expect.poll(() => page.locator(`#option-${solana.id} .wallet-status`).textContent(), { timeout: 15_000 }).toContain("Payment sent")
      expect(solanaNode.tokenBalance(payer.publicKey, SOLANA_USDC)).toBe(80_000_000n)
      const report = await app.run(Effect.flatMap(ChainWatchers, (watchers) => watchers.poll("solana")))
      expect(report.evidence).toBe(1)
      await page.locator(".status-payment_detected").waitFor({ timeout: 15_000 })
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }
  })
})
