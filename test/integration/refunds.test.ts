import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { publicRequest, startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"

let app: TestApp
let merchant: TestMerchant

beforeAll(async () => {
  app = await startTestApp()
  merchant = await app.createMerchant()
})
afterAll(async () => {
  await app?.close()
})

const PAYER_EVM = "0x52908400098527886E0F7030069857D2E4169EE7"
const OTHER_EVM = "0xde709f2102306220921060314715629080e2fb77"

const newInvoice = async (amountUsd = 20, owner = merchant) => {
  const { body } = await owner.api("/api/checkout/invoices", { body: { amountUsd } })
  const option = (network: string) => body.paymentOptions.find((candidate: any) => candidate.network === network)
  return { invoice: body, ethereum: option("ethereum"), bitcoin: option("bitcoin"), solana: option("solana") }
}

const txHash = () => `0x${crypto.randomUUID().replaceAll("-", "")}${crypto.randomUUID().replaceAll("-", "")}`

const simulatePayment = (invoiceId: string, paymentOptionId: string, amount: string, confirmations = 1_000, transactionHash = txHash()) =>
  merchant.dashboard(`/api/dev/invoices/${invoiceId}/simulate-payment`, { body: { paymentOptionId, amount, confirmations, transactionHash } })

const publicJson = (path: string, body?: unknown) =>
  publicRequest(app.baseUrl, path, body === undefined ? {} : { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })

describe("refunds over HTTP", () => {
  it("refunds an overpayment once, to one address, and lets the merchant reject it", async () => {
    const { ethereum, invoice } = await newInvoice(20)
    expect((await simulatePayment(invoice.id, ethereum.id, "25")).status).toBe(200)

    const before = await publicJson(`/api/checkout/pay/${invoice.id}/refunds`)
    expect(before.status).toBe(200)
    expect(before.body).toEqual({
      refundable: [{ paymentOptionId: ethereum.id, network: "ethereum", assetCode: ethereum.assetCode, amount: "5", amountAtomic: "5000000", reason: "overpayment" }],
      refunds: []
    })

    const bad = await publicJson(`/api/checkout/pay/${invoice.id}/refunds`, { paymentOptionId: ethereum.id, refundAddress: PAYER_EVM.replace("E7", "e7") })
    expect(bad).toMatchObject({ status: 400, body: { error: "refundAddress must be a valid ethereum address" } })

    const created = await publicJson(`/api/checkout/pay/${invoice.id}/refunds`, { paymentOptionId: ethereum.id, refundAddress: PAYER_EVM, email: "payer@example.com" })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ paymentOptionId: ethereum.id, amount: "5", refundAddress: PAYER_EVM, status: "requested", transactionHash: null })
    expect(created.body).not.toHaveProperty("payerEmail")

    const repeat = await publicJson(`/api/checkout/pay/${invoice.id}/refunds`, { paymentOptionId: ethereum.id, refundAddress: PAYER_EVM.toLowerCase() })
    expect(repeat.status).toBe(200)
    expect(repeat.body.id).toBe(created.body.id)
    const other = await publicJson(`/api/checkout/pay/${invoice.id}/refunds`, { paymentOptionId: ethereum.id, refundAddress: OTHER_EVM })
    expect(other).toMatchObject({ status: 409, body: { error: "A refund was already requested for this payment option" } })

    const after = await publicJson(`/api/checkout/pay/${invoice.id}/refunds`)
    expect(after.body.refundable).toEqual([])
    expect(after.body.refunds).toHaveLength(1)

    const listed = await merchant.dashboard("/api/dashboard/refunds?status=requested")
    expect(listed.status).toBe(200)
    const mine = listed.body.data.find((refund: any) => refund.id === created.body.id)
    expect(mine).toMatchObject({ amountAtomic: "5000000", payerEmail: "payer@example.com", invoiceId: invoice.id })
    expect(mine.paymentRequest.uri).toBe(`ethereum:${ethereum.paymentUri === null ? mine.tokenContract : mine.tokenContract}@1/transfer?address=${PAYER_EVM}&uint256=5000000`)
    expect(mine.paymentRequest.qrCode).toMatch(/^<svg/)

    const rejected = await merchant.dashboard(`/api/dashboard/refunds/${created.body.id}/reject`, { body: { note: "Keep it as credit" } })
    expect(rejected).toMatchObject({ status: 200, body: { status: "rejected", rejectionNote: "Keep it as credit" } })
    const again = await merchant.dashboard(`/api/dashboard/refunds/${created.body.id}/reject`, { body: { note: "twice" } })
    expect(again).toMatchObject({ status: 409, body: { error: "Only a requested refund can be rejected" } })
  })
})
