import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { RateLimits } from "../accounts/RateLimits.ts"
import { clientAddress, orTooManyRequests } from "../http/RateLimitAnswers.ts"
import { SolanaPrepare } from "../chains/solana/SolanaPrepare.ts"
import { CurrentMerchant } from "../accounts/CurrentMerchant.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { merchantInvoiceView, publicInvoiceView, publicStatusView, statusView } from "../domain/InvoiceViews.ts"
import { Api } from "../http/Api.ts"
import { TooManyRequests } from "../http/ApiErrors.ts"
import { mapDomainErrors } from "../http/ErrorMapping.ts"
import { withIdempotency } from "../http/Idempotency.ts"
import { jsonResponse } from "../http/JsonResponse.ts"
import { InvoiceStatusView, InvoiceView, PublicInvoiceStatusView, PublicInvoiceView, SolanaWalletPayment } from "./InvoiceResponses.ts"
import { Invoices } from "./Invoices.ts"
import { StatusStream } from "./StatusStream.ts"

type View = ReturnType<typeof merchantInvoiceView>

export const MerchantHttpLive = HttpApiBuilder.group(Api, "merchant", (handlers) =>
  Effect.gen(function*() {
    const invoices = yield* Invoices
    const { publicUrl } = yield* AppConfig
    const view = (parts: Parameters<typeof merchantInvoiceView>[0]) => merchantInvoiceView(parts, publicUrl)
    /** The answer to a retry whose first run died after committing: the invoice as it is now. */
    const recovered = (merchantId: string) => (invoiceId: string) => invoices.get(merchantId, invoiceId).pipe(Effect.map(view), mapDomainErrors)
    return handlers
      .handle("create", ({ payload, headers }) =>
        Effect.gen(function*() {
          const merchant = yield* CurrentMerchant
          return yield* withIdempotency(
            { merchantId: merchant.merchantId, scope: "create", key: headers["idempotency-key"], payload, successStatus: 201 },
            invoices.create(merchant, payload).pipe(
              Effect.map(({ invoice, options }) => view({ invoice, options })),
              mapDomainErrors
            ),
            recovered(merchant.merchantId)
          ).pipe(Effect.map((created) => jsonResponse(InvoiceView, created, 201)))
        }))
      .handle("detail", ({ params }) =>
        Effect.gen(function*() {
          const merchant = yield* CurrentMerchant
          return jsonResponse(InvoiceView, view(yield* mapDomainErrors(invoices.get(merchant.merchantId, params.id))))
        }))
      .handle("status", ({ params }) =>
        Effect.gen(function*() {
          const merchant = yield* CurrentMerchant
          return jsonResponse(InvoiceStatusView, statusView(yield* mapDomainErrors(invoices.get(merchant.merchantId, params.id))))
        }))
      .handle("void", ({ params, payload, headers }) =>
        Effect.gen(function*() {
          const merchant = yield* CurrentMerchant
          return yield* withIdempotency(
            // An omitted body is the empty object: the same idempotent request either way.
            { merchantId: merchant.merchantId, scope: `void:${params.id}`, key: headers["idempotency-key"], payload: payload ?? {}, successStatus: 200 },
            invoices.void(merchant.merchantId, params.id).pipe(Effect.map(view), mapDomainErrors),
            recovered(merchant.merchantId)
          )
        }))
      .handle("recordPayment", ({ params, payload, headers }) =>
        Effect.gen(function*() {
          const merchant = yield* CurrentMerchant
          return yield* withIdempotency(
            {
              merchantId: merchant.merchantId,
              scope: `record-payment:${params.id}`,
              key: headers["idempotency-key"],
              payload,
              successStatus: 200
            },
            invoices.recordPayment(merchant.merchantId, params.id, payload.note).pipe(Effect.map(view), mapDomainErrors),
            recovered(merchant.merchantId)
          )
        }))
  }))

export const PublicHttpLive = HttpApiBuilder.group(Api, "public", (handlers) =>
  Effect.gen(function*() {
    const invoices = yield* Invoices
    const solana = yield* SolanaPrepare
    const rateLimits = yield* RateLimits
    const statusStream = yield* StatusStream
    const { publicUrl } = yield* AppConfig
    return handlers
      .handle("invoice", ({ params }) =>
        invoices.getPublic(params.id).pipe(
          Effect.map((parts) => jsonResponse(PublicInvoiceView, publicInvoiceView(parts, publicUrl))),
          mapDomainErrors
        ))
      .handle("status", ({ params }) =>
        invoices.getPublic(params.id).pipe(
          Effect.map((parts) => jsonResponse(PublicInvoiceStatusView, publicStatusView(parts))),
          mapDomainErrors
        ))
      .handle("statusEvents", ({ params, headers }) =>
        Effect.flatMap(clientAddress, (client) => statusStream.open(params.id, headers["last-event-id"], client)).pipe(
          Effect.catchTag("StreamLimitReached",
            ({ max }) => Effect.fail(new TooManyRequests({ error: `At most ${max} open status streams per client address; close one or poll the status` }))),
          Effect.catchTag("InvoiceNotFound", (error) => mapDomainErrors(Effect.fail(error)))
        ))
      .handle("prepareSolanaWalletPayment", ({ params, payload }) =>
        Effect.gen(function*() {
          yield* orTooManyRequests(rateLimits.solanaPrepare(yield* clientAddress))
          const prepared = yield* mapDomainErrors(solana.prepare(params.id, payload))
          return jsonResponse(SolanaWalletPayment, prepared)
        }))
  }))

export type { View }
