import { existsSync } from "node:fs"
import { Keypair, PublicKey } from "@solana/web3.js"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { type Address, getAddress } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEMO_KEYS } from "../../src/demo/DemoMerchant.ts"
import { type AnvilNode, startAnvil, TEST_TOKENS } from "../support/Anvil.ts"
import { ethereumUsdcMethod, fundedSolanaWallet, pollWatcher, sendPrepared, sendSolanaTransfer, solanaUsdcMethod } from "../support/ChainSuites.ts"
import { decodeQrSvg } from "../support/QrRaster.ts"
import { type SolanaNode, startSolanaNode } from "../support/SolanaRpc.ts"
import { publicRequest, startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import { signedInPage } from "./DashboardScenes.ts"

/**
 * Refunds without custody (issue #40), end to end in Chromium over a real chain (anvil): an
 * invoice overpaid by a token transfer, the payer asking for the difference on the payment page,
 * the merchant paying it from their own wallet with the payment request the dashboard shows, the
 * watcher seeing that transfer, and both sides coming to show the refund completed. And the other
 * way out: the merchant rejects with a note, which the payer reads.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const available = existsSync(CHROMIUM)
if (!available) console.log(`refunds e2e: skipped, no browser at ${CHROMIUM} (apt-get install -y chromium)`)

const { USDC, USDT } = TEST_TOKENS
/** EIP-55's own example address: mixed case, with a valid checksum. */
const REFUND_TO = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
/** The same address with one letter's case changed: the right shape, a wrong checksum. */
const BAD_CHECKSUM = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD"
const PHONE = { width: 390, height: 844 }

const SOLANA_USDC = Keypair.generate().publicKey
const SOLANA_REQUIRED = 4

let app: TestApp
let anvil: AnvilNode
let solana: SolanaNode
/** A merchant paid in USDC on Solana (to a fixed recipient, with a reference per invoice). */
let solanaMerchant: TestMerchant
let browser: Browser
let merchant: TestMerchant
let payer: Address
/** The merchant's own wallet, which pays refunds (the service never holds the funds). */
let merchantWallet: Address

const pollEthereum = () => pollWatcher(app, "ethereum")
const pollSolana = () => pollWatcher(app, "solana")

/** A Solana wallet with SOL for fees and 1,000 USDC. */
const solanaWallet = () => fundedSolanaWallet(solana, [SOLANA_USDC], 1_000_000_000n)

/** An invoice of 20 USD paid with 25 USDC on ethereum, confirmed (two confirmations): 5 USDC overpaid. */
const overpaidInvoice = async (productName: string) => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 20, productName } })
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  const options = created.body.paymentOptions as Array<{ id: string; assetCode: string; destinationAddress: string }>
  const option = options.find((candidate) => candidate.assetCode === "USDC")!
  await anvil.transfer(USDC, payer, getAddress(option.destinationAddress), 25_000_000n)
  await anvil.mine(1)
  await pollEthereum()
  await expect.poll(async () => (await merchant.api(`/api/checkout/invoices/${created.body.id}`, {})).body.status, { timeout: 15_000 }).toBe("confirmed")
  return { id: created.body.id as string, optionId: option.id, usdt: options.find((candidate) => candidate.assetCode === "USDT")! }
}

/** The payment page at phone width; page errors recorded (a 400 the page asked for is not one). */
const payerPage = async (invoiceId: string, options: { readonly clock?: boolean } = {}) => {
  const context: BrowserContext = await browser.newContext({ viewport: PHONE })
  const page: Page = await context.newPage()
  if (options.clock === true) await page.clock.install()
  const problems: Array<string> = []
  const posts: Array<string> = []
  page.on("pageerror", (error) => problems.push(error.message))
  page.on("request", (request) => {
    if (request.method() === "POST") posts.push(request.url())
  })
  await page.goto(`${app.baseUrl}/pay/${invoiceId}`)
  return { context, page, problems, posts }
}

const noOverflow = async (page: Page) => expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(page.viewportSize()!.width)

describe.skipIf(!available)("refunds in the browser", () => {
  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 1 })
    payer = anvil.accounts[1]
    merchantWallet = anvil.accounts[2]
    solana = await startSolanaNode()
    solana.installMint(SOLANA_USDC, 6, Keypair.generate().publicKey)
    await anvil.installToken(USDC)
    await anvil.installToken(USDT)
    await anvil.mint(USDC, payer, 10n ** 12n)
    await anvil.mint(USDT, payer, 10n ** 12n)
    await anvil.mint(USDC, merchantWallet, 10n ** 12n)
    app = await startTestApp({}, {
      CHECKOUT_RPC_URL_ETHEREUM: anvil.rpcUrl,
      CHECKOUT_TOKEN_ETHEREUM_USDC: USDC,
      CHECKOUT_TOKEN_ETHEREUM_USDT: USDT,
      CHECKOUT_CONFIRMATIONS_ETHEREUM: "2",
      CHECKOUT_RPC_URL_SOLANA: solana.url,
      CHECKOUT_TOKEN_SOLANA_USDC: SOLANA_USDC.toBase58(),
      CHECKOUT_CONFIRMATIONS_SOLANA: String(SOLANA_REQUIRED)
    })
    solanaMerchant = await app.createMerchant({ methods: [solanaUsdcMethod()] })
    merchant = await app.createMerchant({
      methods: [
        ethereumUsdcMethod,
        { network: "ethereum", assetCode: "USDT", railType: "address_transfer", enabled: true, isDefault: false, recipientAddress: null, xpub: DEMO_KEYS.evmXpub }
      ]
    })
    await pollEthereum()
    await pollSolana()
    const { chromium } = await import("playwright-core")
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"] })
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await app?.close()
    await anvil?.stop()
    await solana?.close()
  })

  it("the payer asks for the overpaid 5 USDC, the merchant pays the dashboard's payment request from their wallet, and both come to show it completed", async () => {
    const invoice = await overpaidInvoice("Tea set")
    const { context, page, problems, posts } = await payerPage(invoice.id)
    try {
      // The offer: the one refundable option, its amount, a button that opens the form.
      const section = page.locator("section.refund")
      await section.waitFor()
      expect(await section.locator(".refund-single").textContent()).toBe("5 USDC on Ethereum")
      expect(await section.locator(".refund-reason").textContent()).toContain("You paid more than this invoice asks for")
      const opener = section.getByRole("button", { name: "Request a refund" })
      expect(await opener.getAttribute("aria-expanded")).toBe("false")
      await opener.click()
      // One button: it gives way to the form it opened (issue #47).
      expect(await section.locator("button.refund-open").isHidden()).toBe(true)
      expect(await section.locator("form.refund-form").isVisible()).toBe(true)
      const address = page.getByLabel("Your Ethereum address for the refund")
      expect(await address.evaluate((element) => element === document.activeElement)).toBe(true)
      expect(await page.locator("#refund-address-hint").textContent()).toContain("starting with 0x")

      // Not an address at all: the page says so without asking the server.
      await address.fill("my wallet")
      await page.getByRole("button", { name: "Request the refund" }).click()
      expect(await page.locator("#refund-address-error").textContent()).toBe("This does not look like a Ethereum address.")
      expect(await address.getAttribute("aria-invalid")).toBe("true")
      expect(posts).toEqual([])

      // The right shape with a wrong checksum: the server's own error, next to the field.
      await address.fill(BAD_CHECKSUM)
      const refused = page.waitForResponse((response) => response.url().endsWith(`/api/checkout/pay/${invoice.id}/refunds`) && response.request().method() === "POST")
      await page.getByRole("button", { name: "Request the refund" }).click()
      expect((await refused).status()).toBe(400)
      await expect.poll(() => page.locator("#refund-address-error").textContent()).toBe("refundAddress must be a valid ethereum address")
      expect(await address.getAttribute("aria-invalid")).toBe("true")
      expect(await address.evaluate((element) => element === document.activeElement)).toBe(true)

      // A valid address and an email: the refund is requested, its status announced and focused.
      await address.fill(REFUND_TO)
      await page.getByLabel("Email (optional, to hear when it is sent)").fill("ada@example.com")
      await page.getByRole("button", { name: "Request the refund" }).click()
      const item = section.locator(".refund-item")
      await item.locator(".refund-state").waitFor()
      expect(await item.getAttribute("data-status")).toBe("requested")
      expect(await item.locator(".refund-state").textContent()).toBe("Requested: the seller has been asked to send it.")
      expect(await item.locator(".refund-amount").textContent()).toBe(`5 USDC on Ethereum to ${REFUND_TO}`)
      expect(await item.locator(".refund-state").evaluate((element) => element === document.activeElement)).toBe(true)
      expect(await section.locator(".refund-offer").isHidden()).toBe(true)
      await noOverflow(page)
      // After a reload the page shows it from the server.
      await page.reload()
      await section.locator(".refund-item[data-status=requested]").waitFor()
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }

    // The merchant's dashboard: the Refunds view lists it; "Pay refund" shows the payment request.
    const dashboard = await signedInPage(browser, app, merchant, "desktop")
    let uri: string
    try {
      await dashboard.page.goto(`${app.baseUrl}/dashboard#/refunds`)
      await dashboard.page.getByRole("heading", { name: "Refunds", level: 1 }).waitFor()
      const row = dashboard.page.locator("tr[data-refund]")
      expect(await row.count()).toBe(1)
      expect(await row.getAttribute("data-status")).toBe("requested")
      expect(await row.locator("td.title").textContent()).toBe("5 USDC on Ethereum")
      expect(await row.locator("td", { hasText: REFUND_TO }).count()).toBe(1)
      await row.getByRole("button", { name: "Pay refund" }).click()
      const panel = dashboard.page.locator("section.refund-pay")
      await panel.waitFor()
      expect(await panel.locator("h2").evaluate((element) => element === document.activeElement)).toBe(true)
      uri = (await panel.locator(".payment-uri").textContent())!
      // EIP-681: a transfer of exactly 5 USDC (6 decimals) of the token on chain 1 to the payer's refund address.
      expect(uri).toBe(`ethereum:${USDC}@1/transfer?address=${REFUND_TO}&uint256=5000000`)
      expect(await panel.getByRole("link", { name: "Open in wallet" }).getAttribute("href")).toBe(uri)
      expect(decodeQrSvg(await panel.locator("figure.qr").innerHTML())).toBe(uri)
      expect(await panel.locator("code.recipient").textContent()).toBe(REFUND_TO)
      // The invoice's own page lists it too.
      await dashboard.page.goto(`${app.baseUrl}/dashboard#/invoices/${invoice.id}`)
      await dashboard.page.locator("[data-section=refunds] tr[data-refund][data-status=requested]").waitFor()
      expect(dashboard.problems).toEqual([])
    } finally {
      await dashboard.context.close()
    }

    // The merchant's wallet pays what the URI asks for, as a wallet would read it.
    const [, recipient, amount] = /address=(0x[0-9a-fA-F]{40})&uint256=(\d+)$/.exec(uri)!
    await anvil.transfer(USDC, merchantWallet, getAddress(recipient), BigInt(amount))
    await pollEthereum()
    const refundStatus = async () => {
      const list = await merchant.dashboard(`/api/dashboard/invoices/${invoice.id}/refunds`)
      return (list.body.data as Array<{ status: string }>)[0]?.status
    }
    await expect.poll(refundStatus, { timeout: 15_000 }).toBe("sent")
    await anvil.mine(1)
    await pollEthereum()
    await expect.poll(refundStatus, { timeout: 15_000 }).toBe("completed")

    const after = await signedInPage(browser, app, merchant, "phone")
    try {
      await after.page.goto(`${app.baseUrl}/dashboard#/refunds?status=completed`)
      const row = after.page.locator("tr[data-refund]")
      await row.waitFor()
      expect(await row.getAttribute("data-status")).toBe("completed")
      expect(await row.locator(".status").textContent()).toBe("Completed")
      expect(await row.getByRole("button", { name: "Pay refund" }).count()).toBe(0)
      await noOverflow(after.page)
      expect(after.problems).toEqual([])
    } finally {
      await after.context.close()
    }
    const seen = await payerPage(invoice.id)
    try {
      const item = seen.page.locator(".refund-item[data-status=completed]")
      await item.waitFor()
      expect(await item.locator(".refund-state").textContent()).toBe("Refunded.")
      expect(await item.locator(".refund-tx").textContent()).toMatch(/^Transaction: 0x[0-9a-f]{8}…[0-9a-f]{8}$/)
      expect(await seen.page.locator(".refund-offer").isHidden()).toBe(true)
      expect(seen.problems).toEqual([])
    } finally {
      await seen.context.close()
    }
  })

  it("the merchant rejects a refund with a note from the invoice's page, and the open payment page comes to show the note without a reload", async () => {
    const invoice = await overpaidInvoice("Linen apron")
    const requested = await publicRequest(app.baseUrl, `/api/checkout/pay/${invoice.id}/refunds`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ paymentOptionId: invoice.optionId, refundAddress: REFUND_TO.toLowerCase() })
    })
    expect(requested.status, JSON.stringify(requested.body)).toBe(201)

    // The payer has the page open (its clock driven by the test) while the merchant decides.
    const payer = await payerPage(invoice.id, { clock: true })
    const note = "Refunded by bank transfer instead, as agreed by email"
    try {
      await payer.page.locator(".refund-item[data-status=requested]").waitFor()
      await payer.page.evaluate(() => ((window as unknown as { stillHere: boolean }).stillHere = true))

      const dashboard = await signedInPage(browser, app, merchant, "phone")
      try {
        await dashboard.page.goto(`${app.baseUrl}/dashboard#/invoices/${invoice.id}`)
        const row = dashboard.page.locator("[data-section=refunds] tr[data-refund]")
        await row.waitFor()
        await row.getByRole("button", { name: "Reject" }).click()
        const form = dashboard.page.locator("form.refund-reject")
        await form.getByLabel("Note to the payer (required)").fill(note)
        await form.getByRole("button", { name: "Reject refund" }).click()
        await dashboard.page.locator("[data-section=refunds] tr[data-refund][data-status=rejected]").waitFor()
        expect(await dashboard.page.locator("[data-section=refunds] tr[data-refund]").textContent()).toContain(`Note: ${note}`)
        expect(await dashboard.page.getByRole("button", { name: "Reject" }).count()).toBe(0)
        expect(dashboard.problems).toEqual([])
      } finally {
        await dashboard.context.close()
      }

      // The page asks again after 8 s while a refund is on its way.
      await payer.page.clock.fastForward("00:09")
      const item = payer.page.locator(".refund-item[data-status=rejected]")
      await item.waitFor({ timeout: 5_000 })
      expect(await payer.page.evaluate(() => (window as unknown as { stillHere?: boolean }).stillHere)).toBe(true)
      expect(await item.locator(".refund-state").textContent()).toBe("Declined by the seller.")
      expect(await item.locator(".refund-note").textContent()).toBe(`The seller's note: ${note}`)
      // One request per payment option, ever: nothing more is offered.
      expect(await payer.page.locator(".refund-offer").isHidden()).toBe(true)
      expect(payer.problems).toEqual([])
    } finally {
      await payer.context.close()
    }
  })

  it("asks which payment to refund when two options have something to refund, and offers the other one after", async () => {
    const invoice = await overpaidInvoice("Bread board")
    // 3 USDT more after the invoice was paid in full, in a later second than the USDC (the options
    // keep in the order of their first payment): the invoice keeps none of it.
    const latest = await anvil.publicClient.getBlock()
    await anvil.setNextBlockTimestamp(latest.timestamp + 5n)
    await anvil.transfer(USDT, payer, getAddress(invoice.usdt.destinationAddress), 3_000_000n)
    await anvil.mine(1)
    await pollEthereum()
    await expect.poll(async () => (await publicRequest(app.baseUrl, `/api/checkout/pay/${invoice.id}/refunds`)).body.refundable.length, { timeout: 15_000 }).toBe(2)

    const { context, page, problems } = await payerPage(invoice.id)
    try {
      const section = page.locator("section.refund")
      await section.waitFor()
      await section.getByRole("button", { name: "Request a refund" }).click()
      const choices = section.getByRole("group", { name: "Which payment to refund" })
      expect(await choices.getByRole("radio").count()).toBe(2)
      expect(await section.locator(".refund-single").isHidden()).toBe(true)
      const usdc = choices.getByRole("radio", { name: "5 USDC on Ethereum" })
      // The first option is chosen, and has the focus.
      expect(await usdc.isChecked()).toBe(true)
      expect(await usdc.evaluate((element) => element === document.activeElement)).toBe(true)
      await choices.getByRole("radio", { name: "3 USDT on Ethereum" }).check()
      await page.getByLabel("Your Ethereum address for the refund").fill(REFUND_TO.toLowerCase())
      await page.getByRole("button", { name: "Request the refund" }).click()
      await section.locator(".refund-item[data-status=requested]").waitFor()
      expect(await section.locator(".refund-item .refund-amount strong").textContent()).toBe("3 USDT on Ethereum")
      // The USDC is still on offer, alone now.
      expect(await section.locator(".refund-offer").isVisible()).toBe(true)
      expect(await section.locator(".refund-single").textContent()).toBe("5 USDC on Ethereum")
      expect(await choices.isHidden()).toBe(true)
      await noOverflow(page)
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }
  })

  it("on Solana the merchant prepares the refund's transaction for their wallet in the dashboard; signed and sent, it completes the refund", async () => {
    // $10 paid with 15 USDC on Solana, confirmed.
    const created = await solanaMerchant.api("/api/checkout/invoices", { body: { amountUsd: 10, productName: "Honey jar" } })
    expect(created.status).toBe(201)
    const option = created.body.paymentOptions.find((candidate: { network: string }) => candidate.network === "solana")
    const paying = solanaWallet()
    sendSolanaTransfer(solana, paying, {
      recipient: new PublicKey(option.optionPayload.recipientAddress),
      mint: SOLANA_USDC,
      amountAtomic: 15_000_000n,
      reference: new PublicKey(option.optionPayload.reference),
      memo: "Honey jar"
    })
    await pollSolana()
    solana.advance(SOLANA_REQUIRED)
    await pollSolana()
    expect((await solanaMerchant.api(`/api/checkout/invoices/${created.body.id}`)).body.status).toBe("confirmed")

    // The payer asks on the page, with the address hint of Solana.
    const refundee = paying.publicKey.toBase58()
    const payer = await payerPage(created.body.id)
    try {
      await payer.page.getByRole("button", { name: "Request a refund" }).click()
      expect(await payer.page.locator(".refund-single").textContent()).toBe("5 USDC on Solana")
      expect(await payer.page.locator("#refund-address-hint").textContent()).toContain("A Solana wallet address")
      await payer.page.getByLabel("Your Solana address for the refund").fill(refundee)
      await payer.page.getByRole("button", { name: "Request the refund" }).click()
      await payer.page.locator(".refund-item[data-status=requested]").waitFor()
      expect(payer.problems).toEqual([])
    } finally {
      await payer.context.close()
    }

    // The merchant: Pay refund shows the Solana Pay request; "Prepare transaction" the unsigned transfer from their wallet.
    const wallet = solanaWallet()
    const dashboard = await signedInPage(browser, app, solanaMerchant, "phone")
    try {
      await dashboard.page.goto(`${app.baseUrl}/dashboard#/refunds?status=requested`)
      await dashboard.page.getByRole("button", { name: "Pay refund" }).click()
      const panel = dashboard.page.locator("section.refund-pay")
      const uri = (await panel.locator(".payment-uri").textContent())!
      expect(uri).toMatch(new RegExp(`^solana:${refundee}\\?amount=5&spl-token=${SOLANA_USDC.toBase58()}&reference=[1-9A-HJ-NP-Za-km-z]{32,44}&label=Refund&memo=Refund%20`))
      expect(decodeQrSvg(await panel.locator("figure.qr").innerHTML())).toBe(uri)
      await panel.getByLabel("Your wallet's public key (it pays the refund and the fee)").fill(wallet.publicKey.toBase58())
      await panel.getByRole("button", { name: "Prepare transaction" }).click()
      const transaction = await panel.locator("textarea.transaction").inputValue()
      expect(transaction).toMatch(/^[A-Za-z0-9+/]+=*$/)
      await sendPrepared(solana, transaction, wallet)
      expect(solana.tokenBalance(paying.publicKey, SOLANA_USDC)).toBe(1_000_000_000n - 15_000_000n + 5_000_000n)
      await noOverflow(dashboard.page)
      expect(dashboard.problems).toEqual([])
    } finally {
      await dashboard.context.close()
    }
    await pollSolana()
    solana.advance(SOLANA_REQUIRED)
    await pollSolana()
    const list = await solanaMerchant.dashboard(`/api/dashboard/invoices/${created.body.id}/refunds`)
    expect(list.body.data[0].status).toBe("completed")
  })

  it("a refunds list answered after the merchant left the view raises no error and draws nothing", async () => {
    const dashboard = await signedInPage(browser, app, merchant, "desktop")
    try {
      let release = () => {}
      const held = new Promise<void>((resolve) => (release = resolve))
      const asked = new Promise<void>((resolve) =>
        void dashboard.page.route("**/api/dashboard/refunds*", async (route) => {
          resolve()
          await held
          await route.continue()
        })
      )
      await dashboard.page.goto(`${app.baseUrl}/dashboard#/refunds`)
      await asked
      await dashboard.page.evaluate(() => (location.hash = "#/keys"))
      await dashboard.page.getByRole("heading", { name: "API keys" }).waitFor()
      const answered = dashboard.page.waitForResponse("**/api/dashboard/refunds*")
      release()
      await answered
      await dashboard.page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 300)))
      expect(await dashboard.page.getByRole("heading", { name: "Refunds" }).count()).toBe(0)
      expect(dashboard.problems).toEqual([])
    } finally {
      await dashboard.context.close()
    }
  })
})
