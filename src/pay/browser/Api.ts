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
import type { PublicRefundsGroup } from "../../refunds/RefundsApi.ts"

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
/** POST /api/checkout/pay/:id/simulate-payment (test invoices only). */
export type SimulateTestPaymentBody = Body<"simulateTestPayment">
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
type RefundsEndpoint<Id extends string> = HttpApiEndpoint.WithIdentifier<HttpApiGroup.Endpoints<typeof PublicRefundsGroup>, Id>
export type PayRefunds = Wire<HttpApiEndpoint.Success<RefundsEndpoint<"list">>>
export type Refundable = PayRefunds["refundable"][number]
/** POST /api/checkout/pay/:id/refunds: its body and the refund it answers (201, or 200 when asked again). */
export type RefundRequestBody = Wire<HttpApiEndpoint.Payload<RefundsEndpoint<"request">>>
export type PublicRefund = Wire<HttpApiEndpoint.Success<RefundsEndpoint<"request">>>

/** Type test: the payer never sees the email given with a refund (with `any` this error disappears). */
// @ts-expect-error a public refund has no payerEmail
export type NoPayerEmail = PublicRefund["payerEmail"]
