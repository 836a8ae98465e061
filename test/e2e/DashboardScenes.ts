import type { Browser, BrowserContext, Page } from "playwright-core"
import { publicRequest, type TestApp, type TestMerchant } from "../support/TestApp.ts"

/**
 * A merchant whose invoices are in the states the dashboard draws differently, made through the
 * development simulator as a chain would report them: shared by the dashboard's e2e suite and
 * `scripts/screenshots.ts`.
 */

export const SIZES = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 800 } } as const
export type Size = keyof typeof SIZES

export interface Scenes {
  readonly merchant: TestMerchant
  readonly awaiting: string
  readonly partial: string
  readonly paid: string
  readonly overpaid: string
  readonly openException: string
  readonly closedException: string
  /** Half paid after its deadline: a partial-payment exception, which "accept the late payment" cannot close. */
  readonly partialException: string
  readonly voided: string
}

const check = (what: string, answer: { status: number; body: unknown }) => {
  if (answer.status >= 300) throw new Error(`${what}: HTTP ${answer.status} ${JSON.stringify(answer.body)}`)
  return answer.body
}

interface Option {
  readonly id: string
  readonly assetCode: string
  readonly quotedAmount: number
}

export const makeScenes = async (app: TestApp): Promise<Scenes> => {
  const merchant = await app.createMerchant()
  const create = async (productName: string, amountUsd: number, merchantReference: string) => {
    const invoice = check(`create ${productName}`, await merchant.api("/api/checkout/invoices", { body: { amountUsd, productName, merchantReference } })) as {
      id: string
      paymentOptions: ReadonlyArray<Option>
    }
    // A stablecoin option: its amounts are plain dollars.
    const option = invoice.paymentOptions.find((candidate) => candidate.assetCode === "USDT") ?? invoice.paymentOptions[0]
    return { id: invoice.id, option }
  }
  const pay = async (id: string, option: Option, share: number, extra: Record<string, unknown> = {}) =>
    check(`pay ${id}`, await merchant.dashboard(`/api/dev/invoices/${id}/simulate-payment`, {
      body: { paymentOptionId: option.id, amount: (option.quotedAmount * share).toFixed(2), confirmations: 100, ...extra }
    }))
  const expire = async (id: string) => check(`expire ${id}`, await merchant.dashboard(`/api/dev/invoices/${id}/simulate-expiry`, { body: {} }))

  const awaiting = await create("Ceramic mug", 12.5, "order-1001")
  const partial = await create("Linen apron", 40, "order-1002")
  await pay(partial.id, partial.option, 0.5)
  const paid = await create("Walnut tray", 64, "order-1003")
  await pay(paid.id, paid.option, 1, { confirmations: 0 })
  check("confirm", await merchant.dashboard(`/api/dev/invoices/${paid.id}/simulate-confirmations`, {
    body: { transactionHash: await lastHash(merchant, paid.id), confirmations: 100 }
  }))
  const overpaid = await create("Espresso cups", 30, "order-1004")
  await pay(overpaid.id, overpaid.option, 1.5)
  // The payer asks for the overpaid half back (issue #40): the Refunds view has one to show.
  check("refund", await publicRequest(app.baseUrl, `/api/checkout/pay/${overpaid.id}/refunds`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ paymentOptionId: overpaid.option.id, refundAddress: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", email: "ada@example.com" })
  }))
  const openException = await create("Tea towel", 9, "order-1005")
  await expire(openException.id)
  await pay(openException.id, openException.option, 1, { late: true })
  const closedException = await create("Bread board", 22, "order-1006")
  await expire(closedException.id)
  await pay(closedException.id, closedException.option, 1, { late: true })
  check("close exception", await merchant.dashboard(`/api/dashboard/invoices/${closedException.id}/exception/close`, {
    body: { action: "accept_late_payment", note: "Paid ten minutes late; accepted" }
  }))
  const partialException = await create("Cotton napkins", 20, "order-1008")
  await expire(partialException.id)
  await pay(partialException.id, partialException.option, 0.5, { late: true })
  const voided = await create("Stoneware bowl", 18, "order-1007")
  check("void", await merchant.api(`/api/checkout/invoices/${voided.id}/void`, { body: {} }))
  return {
    merchant,
    awaiting: awaiting.id,
    partial: partial.id,
    paid: paid.id,
    overpaid: overpaid.id,
    openException: openException.id,
    closedException: closedException.id,
    partialException: partialException.id,
    voided: voided.id
  }
}

const lastHash = async (merchant: TestMerchant, id: string): Promise<string> => {
  const detail = check("detail", await merchant.dashboard(`/api/dashboard/invoices/${id}`)) as { invoice: { payments: ReadonlyArray<{ transactionHash: string }> } }
  return detail.invoice.payments.at(-1)!.transactionHash
}

/** Every view of the dashboard, as a hash route, with the heading that shows it has drawn. */
export const views = (scenes: Scenes): ReadonlyArray<{ readonly name: string; readonly hash: string; readonly heading: string | RegExp }> => [
  { name: "overview", hash: "#/overview", heading: "Overview" },
  { name: "invoices", hash: "#/invoices", heading: "Invoices" },
  { name: "new-invoice", hash: "#/invoices/new", heading: "New invoice" },
  { name: "invoice-awaiting", hash: `#/invoices/${scenes.awaiting}`, heading: "Ceramic mug" },
  { name: "invoice-paid", hash: `#/invoices/${scenes.paid}`, heading: "Walnut tray" },
  { name: "invoice-overpaid", hash: `#/invoices/${scenes.overpaid}`, heading: "Espresso cups" },
  { name: "invoice-open-exception", hash: `#/invoices/${scenes.openException}`, heading: "Tea towel" },
  { name: "invoice-closed-exception", hash: `#/invoices/${scenes.closedException}`, heading: "Bread board" },
  { name: "invoice-partial-exception", hash: `#/invoices/${scenes.partialException}`, heading: "Cotton napkins" },
  { name: "exceptions", hash: "#/exceptions", heading: "Exceptions to review" },
  { name: "refunds", hash: "#/refunds", heading: "Refunds" },
  { name: "keys", hash: "#/keys", heading: "API keys" },
  { name: "settings", hash: "#/settings", heading: "Checkout settings" },
  { name: "webhooks", hash: "#/webhooks", heading: "Webhooks" },
  { name: "lifecycle", hash: "#/lifecycle", heading: "Invoice lifecycle" },
  { name: "chain-watchers", hash: "#/chain-watchers", heading: "Chain watchers" }
]

/** A page at `size`, signed in as the merchant (session cookie and CSRF cookie, as after a login), that records page and console errors. */
export const signedInPage = async (browser: Browser, app: TestApp, merchant: TestMerchant | null, size: Size) => {
  const context: BrowserContext = await browser.newContext({ viewport: SIZES[size], deviceScaleFactor: 1 })
  if (merchant !== null) {
    await context.addCookies([
      { name: "checkout_session", value: merchant.sessionToken, url: app.baseUrl },
      { name: "checkout_csrf", value: merchant.csrfToken, url: app.baseUrl }
    ])
    await context.addInitScript((id) => localStorage.setItem("checkout.userId", id), merchant.merchantId)
  }
  const page: Page = await context.newPage()
  const problems: Array<string> = []
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`))
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`)
  })
  // Nothing is fetched from another host (a link out is followed only when clicked).
  page.on("request", (request) => {
    if (!request.url().startsWith(app.baseUrl) && !request.url().startsWith("data:")) problems.push(`request to another host: ${request.url()}`)
  })
  return { context, page, problems }
}
