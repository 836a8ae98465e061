import { Effect, Layer, Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { RateLimits } from "../accounts/RateLimits.ts"
import { formatAtomic } from "../domain/Money.ts"
import { checkoutApi } from "../http/CheckoutApi.ts"
import { CurrentMerchant } from "../http/CurrentMerchant.ts"
import { livemodeOf } from "../http/LivemodeQuery.ts"
import { clientAddress, orTooManyRequests } from "../http/ApiErrors.ts"
import { PublicRefundView, publicRefundView, refundView } from "./Refund.ts"
import { type RefundableOption, Refunds } from "./Refunds.ts"
import { DashboardRefundsGroup, mapRefundErrors, PublicRefundsGroup } from "./RefundsApi.ts"
import { RefundTransactions } from "./RefundTransactions.ts"

const encodePublicRefund = Schema.encodeSync(PublicRefundView)

const refundableView = ({ option, reason, refundableAtomic }: RefundableOption) => ({
  paymentOptionId: option.id,
  network: option.network,
  assetCode: option.assetCode,
  amount: formatAtomic(refundableAtomic, option.decimals),
  amountAtomic: refundableAtomic.toString(),
  reason
})

export const PublicRefundsHttpLive = HttpApiBuilder.group(checkoutApi(PublicRefundsGroup), "publicRefunds", (handlers) =>
  Effect.gen(function*() {
    const refunds = yield* Refunds
    const { signatureDomain } = refunds
    const rateLimits = yield* RateLimits
    return handlers
      .handle("list", ({ params }) =>
        refunds.forInvoice(params.id).pipe(
          Effect.map(({ refundable, refunds }) => ({ refundable: refundable.map(refundableView), refunds: refunds.map(publicRefundView), signatureDomain })),
          mapRefundErrors
        ))
      .handle("request", ({ params, payload }) =>
        Effect.gen(function*() {
          yield* orTooManyRequests(rateLimits.refundRequest(yield* clientAddress))
          const { created, refund } = yield* mapRefundErrors(refunds.request(params.id, payload))
          // 201 for a new request, 200 for its repeat: one schema, two statuses, so the answer is built here (still encoded by the schema).
          return HttpServerResponse.jsonUnsafe(encodePublicRefund(publicRefundView(refund)), { status: created ? 201 : 200 })
        }))
  })).pipe(Layer.provide([RateLimits.layer, Refunds.layer]))

export const DashboardRefundsHttpLive = HttpApiBuilder.group(checkoutApi(DashboardRefundsGroup), "dashboardRefunds", (handlers) =>
  Effect.gen(function*() {
    const refunds = yield* Refunds
    const transactions = yield* RefundTransactions
    return handlers
      .handle("list", ({ query }) =>
        Effect.gen(function*() {
          const merchant = yield* CurrentMerchant
          const found = yield* refunds.list(merchant.merchantId, livemodeOf(query), query.status)
          return { data: found.map(refundView) }
        }))
      .handle("invoice", ({ params }) =>
        Effect.gen(function*() {
          const merchant = yield* CurrentMerchant
          const found = yield* mapRefundErrors(refunds.listForInvoice(merchant.merchantId, params.id))
          return { data: found.map(refundView) }
        }))
      .handle("choose", ({ params }) =>
        Effect.gen(function*() {
          const merchant = yield* CurrentMerchant
          return refundView(yield* mapRefundErrors(refunds.choose(merchant.merchantId, params.id)))
        }))
      .handle("reject", ({ params, payload }) =>
        Effect.gen(function*() {
          const merchant = yield* CurrentMerchant
          const rejected = yield* mapRefundErrors(refunds.reject(merchant.merchantId, params.id, payload.note))
          return refundView(rejected)
        }))
      .handle("prepareSolanaTransaction", ({ params, payload }) =>
        Effect.gen(function*() {
          const merchant = yield* CurrentMerchant
          const refund = yield* mapRefundErrors(refunds.get(merchant.merchantId, params.id))
          return yield* mapRefundErrors(transactions.prepareSolana(refund, payload.payerPublicKey))
        }))
  })).pipe(Layer.provide([Refunds.layer, RefundTransactions.layer]))
