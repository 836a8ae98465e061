import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"

// `npm run simulate` as a process, against a running service: what the README's first steps type.
let app: TestApp
let merchant: TestMerchant

beforeAll(async () => {
  app = await startTestApp()
  merchant = await app.createMerchant()
})
afterAll(async () => app?.close())

const simulate = async (...args: ReadonlyArray<string>) => {
  const { stdout } = await promisify(execFile)(process.execPath, ["--experimental-strip-types", "--disable-warning=ExperimentalWarning", "scripts/simulate.ts", ...args], {
    env: { ...process.env, CHECKOUT_URL: app.baseUrl, CHECKOUT_TOKEN: merchant.sessionToken },
    encoding: "utf8"
  })
  return stdout
}

const newInvoice = async (amountUsd: number) => (await merchant.api("/api/checkout/invoices", { body: { amountUsd } })).body

describe("npm run simulate -- pay", () => {
  it("pays the invoice's default option in full with a fresh transaction, so a second invoice never collides, and prints the ids npm masks", async () => {
    const first = await newInvoice(5)
    const second = await newInvoice(7)
    const hashes = []
    for (const invoice of [first, second]) {
      const option = invoice.paymentOptions.find((entry: { id: string }) => entry.id === invoice.defaultPaymentOptionId)
      const output = await simulate("pay", invoice.id, "--confirmations", "100")
      expect(output).toContain(`paying invoice ${invoice.id}: option ${option.id} (${option.assetCode} on ${option.network}, the invoice's default), amount ${option.quotedAmount}`)
      expect(output).toContain(`invoice ${invoice.id}: confirmed`)
      hashes.push(output.match(/^transaction (0x[0-9a-f]{64}) \(for confirm and reorg\)$/m)?.[1])
    }
    expect(hashes[0]).toBeDefined()
    expect(hashes[1]).toBeDefined()
    expect(hashes[0]).not.toBe(hashes[1])
    // The printed transaction is the one to use next.
    expect(await simulate("reorg", first.id, hashes[0]!)).toContain("invalidated")
  })

  it("still takes an option and an amount, in either order", async () => {
    const invoice = await newInvoice(10)
    const option = invoice.paymentOptions.at(-1)
    const output = await simulate("pay", invoice.id, "1", option.id)
    expect(output).toContain(`option ${option.id} (${option.assetCode} on ${option.network}), amount 1`)
    expect(output).toMatch(new RegExp(`invoice ${invoice.id}: (partially_paid|payment_detected)`))
  })
})
