import { expect } from "vitest"
import { publicRequest } from "./TestApp.ts"
import type { PublicRefundJson, RefundableJson } from "./Answers.ts"

/** What the payer page lists for an invoice: its refundable amounts and its refunds (public endpoint). */
export const refundsOf = async (baseUrl: string, invoiceId: string) => {
  const answer = await publicRequest(baseUrl, `/api/checkout/pay/${invoiceId}/refunds`)
  expect(answer.status).toBe(200)
  return answer.body as { refundable: Array<RefundableJson>; refunds: Array<PublicRefundJson> }
}

/** The payer asks for everything refundable on the invoice's only refundable option, to `refundAddress`. */
export const requestRefund = async (baseUrl: string, invoiceId: string, refundAddress: string) => {
  const { refundable } = await refundsOf(baseUrl, invoiceId)
  expect(refundable).toHaveLength(1)
  const answer = await publicRequest(baseUrl, `/api/checkout/pay/${invoiceId}/refunds`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ paymentOptionId: refundable[0].paymentOptionId, refundAddress })
  })
  expect(answer.status).toBe(201)
  expect(answer.body.status).toBe("requested")
  return { refund: answer.body, amountAtomic: BigInt(refundable[0].amountAtomic) }
}

/** The invoice's one refund as the payer page shows it. */
export const refundOf = async (baseUrl: string, invoiceId: string) => {
  const { refunds } = await refundsOf(baseUrl, invoiceId)
  expect(refunds).toHaveLength(1)
  return refunds[0]
}
