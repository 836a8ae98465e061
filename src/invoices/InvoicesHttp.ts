import { Clock, Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentMerchant } from "../http/CurrentMerchant.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { merchantInvoiceView, statusView } from "../domain/InvoiceViews.ts"
import { checkoutApi } from "../http/CheckoutApi.ts"
import { MerchantGroup } from "./InvoicesApi.ts"
import { mapDomainErrors } from "../http/ApiErrors.ts"
import { withIdempotency } from "../http/Idempotency.ts"
import { paymentTimingChecked } from "../http/ValidationErrors.ts"
import { Invoices } from "./Invoices.ts"
import type { HandlerRequest } from "../http/HandlerRequest.ts"
import { IdempotencyStore } from "../http/IdempotencyStore.ts"

type View = ReturnType<typeof merchantInvoiceView>

const merchantContext = Effect.gen(function*() {
  const invoices = yield* Invoices
  const { publicUrl } = yield* AppConfig
  const view = (parts: Parameters<typeof merchantInvoiceView>[0]) => Effect.map(Clock.currentTimeMillis, (millis) => merchantInvoiceView(parts, publicUrl, new Date(millis)))
  /** The answer to a retry whose first run died after committing: the invoice as it is now. */
  const recovered = (merchant: Owner) => (invoiceId: string) => invoices.get(merchant.merchantId, invoiceId, merchant.livemode).pipe(Effect.flatMap(view), mapDomainErrors)
  return { invoices, view, recovered }
})
type Context = Effect.Success<typeof merchantContext>
type Owner = Pick<CurrentMerchant["Service"], "merchantId" | "livemode">

/** An Idempotency-Key's scope: a test key's requests never replay a live key's answers, nor the other way round. */
const scoped = (merchant: Owner, scope: string) => (merchant.livemode ? scope : `test:${scope}`)
type Request<Id extends string> = HandlerRequest<typeof MerchantGroup, Id>

const create = ({ invoices, view, recovered }: Context) => ({ payload, headers }: Request<"create">) =>
  Effect.gen(function*() {
    const merchant = yield* CurrentMerchant
    return yield* withIdempotency(
      { merchantId: merchant.merchantId, scope: scoped(merchant, "create"), key: headers["idempotency-key"], payload, successStatus: 201 },
      // The mode rules run before the use case looks anything up (never a 403 or 404 first), yet inside
      // the claim, so that their 400 is stored and replayed for the key like every answer of the use case.
      Effect.andThen(
        paymentTimingChecked(payload.paymentTiming),
        invoices.create(merchant, payload).pipe(
          Effect.flatMap(({ invoice, options }) => view({ invoice, options })),
          mapDomainErrors
        )
      ),
      recovered(merchant)
    )
  })

const recordPayment = ({ invoices, view, recovered }: Context) => ({ params, payload, headers }: Request<"recordPayment">) =>
  Effect.gen(function*() {
    const merchant = yield* CurrentMerchant
    return yield* withIdempotency(
      {
        merchantId: merchant.merchantId,
        scope: scoped(merchant, `record-payment:${params.id}`),
        key: headers["idempotency-key"],
        payload,
        successStatus: 200
      },
      invoices.recordPayment(merchant.merchantId, params.id, payload.note, merchant.livemode).pipe(Effect.flatMap(view), mapDomainErrors),
      recovered(merchant)
    )
  })

export const MerchantHttpLive = HttpApiBuilder.group(checkoutApi(MerchantGroup), "merchant", (handlers) =>
  Effect.gen(function*() {
    const context = yield* merchantContext
    const { invoices, view, recovered } = context
    return handlers
      .handle("create", create(context))
      .handle("detail", ({ params }) =>
        Effect.gen(function*() {
          const merchant = yield* CurrentMerchant
          return yield* view(yield* mapDomainErrors(invoices.get(merchant.merchantId, params.id, merchant.livemode)))
        }))
      .handle("status", ({ params }) =>
        Effect.gen(function*() {
          const merchant = yield* CurrentMerchant
          return statusView(yield* mapDomainErrors(invoices.get(merchant.merchantId, params.id, merchant.livemode)), new Date(yield* Clock.currentTimeMillis))
        }))
      .handle("void", ({ params, payload, headers }) =>
        Effect.gen(function*() {
          const merchant = yield* CurrentMerchant
          return yield* withIdempotency(
            // An omitted body is the empty object: the same idempotent request either way.
            { merchantId: merchant.merchantId, scope: scoped(merchant, `void:${params.id}`), key: headers["idempotency-key"], payload: payload ?? {}, successStatus: 200 },
            invoices.void(merchant.merchantId, params.id, merchant.livemode).pipe(Effect.flatMap(view), mapDomainErrors),
            recovered(merchant)
          )
        }))
      .handle("recordPayment", recordPayment(context))
  })).pipe(Layer.provide([Invoices.layer, IdempotencyStore.layer]))

export type { View }
