import type { Page } from "playwright-core"
import type { TestApp, TestMerchant } from "../support/TestApp.ts"
import type { JsonBody } from "../support/Json.ts"

/**
 * Every state of the payer's page, made on a test app through the API and the development
 * simulator: for the browser tests (axe at both sizes), the screenshots (scripts/screenshots.ts) and
 * the Lighthouse bench (scripts/bench/pages.ts). `prepare` brings the page to the state's view once
 * loaded (the refund offer with its form open).
 */
export interface PayScene {
  readonly name: string
  readonly id: string
  /** The status class the page's status section carries in this state. */
  readonly status: string
  readonly prepare?: (page: Page) => Promise<void>
}

interface Option {
  readonly id: string
  readonly network: string
  readonly assetCode: string
  readonly quotedAmount: number
}

const check = (what: string, answer: { status: number; body: JsonBody }) => {
  if (answer.status >= 300) throw new Error(`${what}: HTTP ${answer.status} ${JSON.stringify(answer.body)}`)
  return answer.body
}

const hash = (pair: string) => `0x${pair.repeat(32)}`

export const makePayScenes = async (app: TestApp, merchant?: TestMerchant): Promise<ReadonlyArray<PayScene>> => {
  const by = merchant ?? await app.createMerchant()
  const create = async (productName: string, amountUsd: number) => {
    const invoice = check(`create ${productName}`, await by.api("/api/checkout/invoices", { body: { amountUsd, productName, billTo: "Grace Hopper" } })) as {
      id: string
      paymentOptions: ReadonlyArray<Option>
    }
    const option = invoice.paymentOptions.find((candidate) => candidate.network === "base") ?? invoice.paymentOptions[0]
    return { id: invoice.id, option }
  }
  const dev = (id: string, action: string, body: Record<string, unknown>) => by.dashboard(`/api/dev/invoices/${id}/${action}`, { body })
  const pay = async (invoice: { id: string; option: Option }, share: number, extra: Record<string, unknown>) =>
    check(`pay ${invoice.id}`,
      await dev(invoice.id, "simulate-payment", { paymentOptionId: invoice.option.id, amount: (invoice.option.quotedAmount * share).toFixed(2), ...extra }))
  const expire = async (id: string) => check(`expire ${id}`, await dev(id, "simulate-expiry", {}))

  const awaiting = await create("Ceramic mug", 12.5)
  const partial = await create("Linen apron", 40)
  await pay(partial, 0.25, { confirmations: 1, transactionHash: hash("1a") })
  const detected = await create("Oak chopping board", 48)
  await pay(detected, 1, { confirmations: 1, transactionHash: hash("2b") })
  const paid = await create("Walnut tray", 64)
  await pay(paid, 1, { confirmations: 100, transactionHash: hash("3c") })
  const late = await create("Tea towel", 30)
  await expire(late.id)
  await pay(late, 1, { late: true, confirmations: 100, transactionHash: hash("4d") })
  const latePartial = await create("Bread board", 30)
  await expire(latePartial.id)
  await pay(latePartial, 0.5, { late: true, confirmations: 100, transactionHash: hash("5e") })
  const closed = await create("Stoneware bowl", 22)
  await expire(closed.id)
  await pay(closed, 1, { late: true, confirmations: 100, transactionHash: hash("6f") })
  check("close unpaid", await by.dashboard(`/api/dashboard/invoices/${closed.id}/exception/close`, { body: { action: "close_unpaid", note: "Sold out meanwhile" } }))
  const expired = await create("Cotton tote", 15)
  await expire(expired.id)
  const voided = await create("Copper kettle", 18)
  check("void", await by.api(`/api/checkout/invoices/${voided.id}/void`, { body: {} }))
  const openRefund = async (page: Page) => {
    await page.locator("button.refund-open").click()
    await page.locator("#refund-address").waitFor()
  }
  return [
    { name: "awaiting", id: awaiting.id, status: "awaiting_payment" },
    { name: "partial", id: partial.id, status: "partially_paid" },
    { name: "detected", id: detected.id, status: "payment_detected" },
    { name: "paid", id: paid.id, status: "confirmed" },
    { name: "late", id: late.id, status: "expired" },
    { name: "late-partial", id: latePartial.id, status: "expired" },
    { name: "closed-unpaid", id: closed.id, status: "expired" },
    { name: "refund-offer", id: closed.id, status: "expired", prepare: openRefund },
    { name: "expired", id: expired.id, status: "expired" },
    { name: "voided", id: voided.id, status: "voided" }
  ]
}
