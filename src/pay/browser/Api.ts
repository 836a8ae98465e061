/**
 * The JSON the payment page's script reads, typed from the public endpoints' declarations (the
 * `Encoded` side of each success schema, as it goes over the wire), as the dashboard does
 * (src/dashboard/browser/Api.ts). Type imports only: nothing of the server reaches the bundle,
 * and `tsc` fails on a field the API does not send.
 */

import type { Schema } from "effect"
import type { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import type { Conflict } from "../../http/ApiErrors.ts"
import type { PublicGroup } from "../PublicApi.ts"
import type { PublicRefundView, RefundableView } from "../../refunds/Refund.ts"

/** The wire form of a schema the endpoint wraps in its JSON codec (whose own `Encoded` is any JSON). */
type Wire<S> = S extends Schema.toCodecJson<infer Inner> ? Inner["Encoded"] : never
type Endpoint<Id extends string> = HttpApiEndpoint.WithIdentifier<HttpApiGroup.Endpoints<typeof PublicGroup>, Id>
type Answer<Id extends string> = Wire<HttpApiEndpoint.Success<Endpoint<Id>>>
type Body<Id extends string> = Wire<HttpApiEndpoint.Payload<Endpoint<Id>>>

/** GET /api/checkout/pay/:id/status: what the page polls. */
export type PayStatus = Answer<"status">
export type PayOption = PayStatus["paymentOptions"][number]
export type PayPayment = PayStatus["payments"][number]
/** POST /api/checkout/pay/:id/prepare-solana-wallet-payment. */
export type PrepareSolanaBody = Body<"prepareSolanaWalletPayment">
export type PreparedSolanaPayment = Answer<"prepareSolanaWalletPayment">
/** Every error of the API: the spec's `{ "error": <message> }`. */
export type ApiError = Schema.Codec.Encoded<typeof Conflict>

/**
 * Type tests: the status payload carries USD amounts, not the server's micros, and no merchant
 * note; with the answers typed as `any` these expected errors disappear and `tsc` fails.
 */
// @ts-expect-error the status payload has no receivedMicros
export type NoMicros = PayStatus["receivedMicros"]
// @ts-expect-error a payment has no amountUsd (amountReceived is in the asset)
export type NoPaymentUsd = PayPayment["amountUsd"]

/** GET /api/checkout/pay/:id/refunds: what can be refunded and the refunds already asked for (issue #40). */
export interface PayRefunds {
  readonly refundable: ReadonlyArray<Refundable>
  readonly refunds: ReadonlyArray<PublicRefund>
}
export type Refundable = typeof RefundableView.Encoded
export type PublicRefund = typeof PublicRefundView.Encoded
/** POST /api/checkout/pay/:id/refunds. */
export interface RefundRequestBody {
  readonly paymentOptionId: string
  readonly refundAddress: string
  readonly email?: string
}
