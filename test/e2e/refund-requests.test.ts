import { existsSync } from "node:fs"
import { ed25519 } from "@noble/curves/ed25519.js"
import { base58 } from "@scure/base"
import { AxeBuilder } from "@axe-core/playwright"
import type { Browser, Page } from "playwright-core"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { refundMessage } from "../../src/refunds/RefundMessage.ts"
import { publicRequest, startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import { signedInPage } from "./DashboardScenes.ts"
import type { OptionJson, RefundJson } from "../support/Answers.ts"

/** What the test exposes to the page (`page.exposeFunction`): its wallets' keys stay in the test. */
type TestWindow = Window & {
  readonly walletRequest: (method: string, params: unknown) => Promise<unknown>
  readonly solanaSignMessage: (message: Array<number>) => Promise<Array<number>>
}

/**
 * Issue #52 in the dashboard (Chromium): an option's pending refund requests side by side, each
 * address beside the address that paid, the one that differs flagged in words, the signed one
 * marked; "Choose this request" keeps one and rejects the other. axe-core finds no violation.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const available = existsSync(CHROMIUM)
const OTHER_EVM = "0xde709f2102306220921060314715629080e2fb77"

let app: TestApp
let browser: Browser
let merchant: TestMerchant

const axeViolations = async (page: Page) => {
  const results = await new AxeBuilder({ page }).setLegacyMode().analyze()
  return results.violations.flatMap((violation) => violation.nodes.map((node) => `${violation.impact ?? "?"} ${violation.id}: ${node.target.join(" ")}`))
}

const request = (invoiceId: string, body: Record<string, unknown>) =>
  publicRequest(app.baseUrl, `/api/checkout/pay/${invoiceId}/refunds`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })

describe.skipIf(!available)("side-by-side refund requests in the dashboard", () => {
  beforeAll(async () => {
    app = await startTestApp({ refundRequestRateLimitPerMinute: 1_000_000 })
    merchant = await app.createMerchant()
    const { chromium } = await import("playwright-core")
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"] })
  }, 180_000)

  afterAll(async () => {
    await browser?.close()
    await app?.close()
  })

  it("shows each requested address beside the address that paid, flags the one that differs, and lets the merchant choose", async () => {
    const payer = privateKeyToAccount(generatePrivateKey())
    const { body: invoice } = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 20 } })
    const option = invoice.paymentOptions.find((candidate: OptionJson) => candidate.network === "ethereum")
    for (const [amount, hash] of [["20", "0x" + "a1".repeat(32)], ["5", "0x" + "b2".repeat(32)]]) {
      const paid = await merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-payment`, {
        body: { paymentOptionId: option.id, amount, confirmations: 1_000, transactionHash: hash, payerAddress: payer.address }
      })
      expect(paid.status).toBe(200)
    }
    const claim = await request(invoice.id, { paymentOptionId: option.id, refundAddress: OTHER_EVM })
    const { body: listing } = await publicRequest(app.baseUrl, `/api/checkout/pay/${invoice.id}/refunds`)
    const message = refundMessage({ domain: listing.signatureDomain, invoiceId: invoice.id, paymentOptionId: option.id, refundAddress: payer.address })
    // An unsigned request from the payer too, so that two stand side by side; then a signed one replaces both.
    const own = await request(invoice.id, { paymentOptionId: option.id, refundAddress: payer.address })
    expect([claim.status, own.status]).toEqual([201, 201])

    const { context, page, problems } = await signedInPage(browser, app, merchant, "desktop")
    await page.goto(`${app.baseUrl}/dashboard#/refunds`)
    await page.getByRole("heading", { name: "Refunds", level: 1 }).waitFor()
    const row = (id: string) => page.locator(`tr[data-refund="${id}"]`)
    await row(claim.body.id).waitFor()
    const claimRow = row(claim.body.id)
    expect(await claimRow.locator(".requested-address").textContent()).toBe(OTHER_EVM)
    expect(await claimRow.locator(".paid-from").textContent()).toBe(`Paid from: ${payer.address}`)
    expect(await claimRow.locator(".differs").textContent()).toBe("⚠ Differs from the address that paid")
    expect(await claimRow.locator(".verification").textContent()).toBe("Not signed")
    expect(await row(own.body.id).locator(".differs").count()).toBe(0)
    expect(await row(own.body.id).locator(".paid-from").textContent()).toBe(`Paid from: ${payer.address}`)
    expect(await axeViolations(page)).toEqual([])

    // The payer signs: the signed request replaces both, and is marked.
    const signed = await request(invoice.id, { paymentOptionId: option.id, refundAddress: payer.address, signature: await payer.signMessage({ message }) })
    expect(signed).toMatchObject({ status: 201, body: { verified: true } })
    await page.reload()
    await row(signed.body.id).waitFor()
    expect(await row(signed.body.id).locator(".verification").textContent()).toBe("Signed by the paying address")
    expect(await row(claim.body.id).getAttribute("data-status")).toBe("rejected")
    expect(await row(signed.body.id).getByRole("button", { name: "Choose this request" }).count()).toBe(0)

    // A second unverified pair on a fresh invoice: "Choose this request" keeps one and rejects the other.
    const { body: second } = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 20 } })
    const secondOption = second.paymentOptions.find((candidate: OptionJson) => candidate.network === "ethereum")
    for (const [amount, hash] of [["20", "0x" + "c3".repeat(32)], ["5", "0x" + "d4".repeat(32)]]) {
      await merchant.dashboard(`/api/dev/invoices/${second.id}/simulate-payment`, {
        body: { paymentOptionId: secondOption.id, amount, confirmations: 1_000, transactionHash: hash, payerAddress: payer.address }
      })
    }
    const first = await request(second.id, { paymentOptionId: secondOption.id, refundAddress: payer.address })
    const rival = await request(second.id, { paymentOptionId: secondOption.id, refundAddress: OTHER_EVM })
    await page.goto(`${app.baseUrl}/dashboard#/invoices/${second.id}`)
    await row(first.body.id).waitFor()
    await row(first.body.id).getByRole("button", { name: "Choose this request" }).click()
    await expect.poll(() => row(rival.body.id).getAttribute("data-status")).toBe("rejected")
    expect(await row(first.body.id).getAttribute("data-status")).toBe("requested")
    expect(await row(first.body.id).getByRole("button", { name: "Choose this request" }).count()).toBe(0)
    expect(await axeViolations(page)).toEqual([])
    expect(problems).toEqual([])
    await context.close()
  }, 120_000)

  it("the payment page signs the request with the injected EIP-1193 wallet that paid, and the request is marked verified", async () => {
    const payer = privateKeyToAccount(generatePrivateKey())
    const { body: invoice } = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 20 } })
    const option = invoice.paymentOptions.find((candidate: OptionJson) => candidate.network === "ethereum")
    for (const [amount, hash] of [["20", "0x" + "e5".repeat(32)], ["5", "0x" + "f6".repeat(32)]]) {
      await merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-payment`, {
        body: { paymentOptionId: option.id, amount, confirmations: 1_000, transactionHash: hash, payerAddress: payer.address }
      })
    }
    // Someone else with the link asked first: the offer stays open to the payer.
    const claim = await request(invoice.id, { paymentOptionId: option.id, refundAddress: OTHER_EVM })
    expect(claim.status).toBe(201)
    const { context, page, problems } = await signedInPage(browser, app, null, "phone")
    // The test wallet: EIP-6963 announcement; personal_sign signs with the payer's key, held by the test.
    await page.exposeFunction("walletRequest", async (method: string, params: ReadonlyArray<string>) => {
      if (method === "eth_requestAccounts") return [payer.address]
      if (method === "personal_sign") return payer.signMessage({ message: { raw: params[0] as `0x${string}` } })
      throw new Error(`unexpected ${method}`)
    })
    await page.addInitScript(() => {
      const provider = { request: ({ method, params }: { method: string; params?: unknown }) => (window as unknown as TestWindow).walletRequest(method, params) }
      window.addEventListener("eip6963:requestProvider",
        () =>
          window.dispatchEvent(new CustomEvent("eip6963:announceProvider", { detail: { info: { uuid: "test", name: "Test wallet", icon: "", rdns: "test.wallet" }, provider } })))
    })
    await page.goto(`${app.baseUrl}/pay/${invoice.id}`)
    await page.getByRole("button", { name: "Request a refund" }).click()
    await page.getByLabel("Your Ethereum address for the refund").fill(payer.address.toLowerCase())
    const sign = page.getByRole("button", { name: "Sign with your wallet and request" })
    await sign.waitFor()
    await sign.click()
    const item = page.locator(".refund-item[data-status=requested]")
    await item.locator(".refund-verified").waitFor()
    expect(await item.locator(".refund-verified").textContent()).toBe("Signed by the wallet that paid.")
    const { body } = await publicRequest(app.baseUrl, `/api/checkout/pay/${invoice.id}/refunds`)
    expect(body.refunds.map((refund: RefundJson) => [refund.refundAddress, refund.status, refund.verified])).toEqual([
      [OTHER_EVM, "rejected", false],
      [payer.address, "requested", true]
    ])
    expect(problems).toEqual([])
    await context.close()
  }, 120_000)

  it("the payment page signs the request with a Solana wallet-standard wallet that paid (signMessage), and the request is marked verified", async () => {
    const secret = ed25519.utils.randomSecretKey()
    const payer = base58.encode(ed25519.getPublicKey(secret))
    const refundTo = base58.encode(ed25519.getPublicKey(ed25519.utils.randomSecretKey()))
    const { body: invoice } = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 20 } })
    const option = invoice.paymentOptions.find((candidate: OptionJson) => candidate.network === "solana")
    for (const amount of ["20", "5"]) {
      const paid = await merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-payment`, {
        body: { paymentOptionId: option.id, amount, confirmations: 1_000, transactionHash: base58.encode(crypto.getRandomValues(new Uint8Array(64))), payerAddress: payer }
      })
      expect(paid.status).toBe(200)
    }
    const { context, page, problems } = await signedInPage(browser, app, null, "phone")
    // The test wallet's key stays in the test: the page hands it the message's bytes.
    await page.exposeFunction("solanaSignMessage", (message: Array<number>) => [...ed25519.sign(new Uint8Array(message), secret)])
    await page.addInitScript((publicKey) => {
      const account = { address: "payer", publicKey: new Uint8Array(publicKey), chains: ["solana:mainnet"], features: [] }
      const wallet = {
        version: "1.0.0",
        name: "Test Solana wallet",
        icon: "data:image/svg+xml;base64,PHN2Zy8+",
        chains: ["solana:mainnet"],
        accounts: [],
        features: {
          "standard:connect": { version: "1.0.0", connect: async () => ({ accounts: [account] }) },
          "solana:signMessage": {
            version: "1.0.0",
            signMessage: async (...inputs: Array<{ message: Uint8Array }>) => {
              const { solanaSignMessage } = window as unknown as TestWindow
              return Promise.all(inputs.map(async (input) => ({ signedMessage: input.message, signature: new Uint8Array(await solanaSignMessage([...input.message])) })))
            }
          }
        }
      }
      window.addEventListener("wallet-standard:app-ready", (event: Event) => (event as CustomEvent<{ register: (wallet: unknown) => void }>).detail.register(wallet))
    }, [...base58.decode(payer)])
    await page.goto(`${app.baseUrl}/pay/${invoice.id}?option=${option.id}`)
    await page.getByRole("button", { name: "Request a refund" }).click()
    await page.getByLabel("Your Solana address for the refund").fill(refundTo)
    const sign = page.getByRole("button", { name: "Sign with your wallet and request" })
    await sign.waitFor()
    await sign.click()
    await page.locator(".refund-item[data-status=requested] .refund-verified").waitFor()
    const { body } = await publicRequest(app.baseUrl, `/api/checkout/pay/${invoice.id}/refunds`)
    expect(body.refunds.map((refund: RefundJson) => [refund.refundAddress, refund.verified])).toEqual([[refundTo, true]])
    expect(problems).toEqual([])
    await context.close()
  }, 120_000)
})
