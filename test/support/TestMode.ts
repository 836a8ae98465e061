import { expect } from "vitest"
import type { JsonBody, TestApp, TestMerchant } from "./TestApp.ts"

// Test mode (issue #55) over a running test app: a merchant's test key and requests made with it.

export interface KeyAnswer {
  readonly status: number
  readonly body: JsonBody
}

/** One request with the given API key (JSON in and out). */
export const withKey = (app: Pick<TestApp, "baseUrl">, apiKey: string) => async (path: string, init: { method?: string; body?: unknown } = {}): Promise<KeyAnswer> => {
  const hasBody = init.body !== undefined
  const response = await fetch(`${app.baseUrl}${path}`, {
    method: init.method ?? (hasBody ? "POST" : "GET"),
    headers: { "x-api-key": apiKey, ...(hasBody ? { "content-type": "application/json" } : {}) },
    body: hasBody ? JSON.stringify(init.body) : undefined
  })
  const text = await response.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // keep the text
  }
  return { status: response.status, body }
}

/** A new test key of the merchant (created through the dashboard's key route) and a request function using it. */
export const testKeyOf = async (app: Pick<TestApp, "baseUrl">, merchant: TestMerchant) => {
  const created = await merchant.dashboard(`/api/users/${merchant.merchantId}/checkout-api-key`, { body: { label: "tests", mode: "test" } })
  expect(created.status).toBe(201)
  expect(created.body.rawKey).toMatch(/^svc_test_[A-Za-z0-9_-]{43}$/)
  return { rawKey: created.body.rawKey as string, api: withKey(app, created.body.rawKey as string) }
}

/** The invoice's first stablecoin option and its amount as decimal text. */
export const stablecoinOption = (
  invoice: { readonly paymentOptions: ReadonlyArray<{ readonly id: string; readonly assetCode: string; readonly quotedAmount: number | string }> }
) => {
  const option = invoice.paymentOptions.find((candidate) => candidate.assetCode === "USDC" || candidate.assetCode === "USDT")
  if (option === undefined) throw new Error("no stablecoin option")
  return { paymentOptionId: option.id, amount: String(option.quotedAmount) }
}
