import { Clock, Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentMerchant } from "../http/CurrentMerchant.ts"
import { AppConfig } from "../config/AppConfig.ts"
import type { InvoiceView } from "../domain/InvoiceResponses.ts"
import { merchantInvoiceView, statusView } from "../domain/InvoiceViews.ts"
import { checkoutApi } from "../http/CheckoutApi.ts"
import { MerchantGroup } from "./InvoicesApi.ts"
import { mapDomainErrors } from "../http/ApiErrors.ts"
import { type IdempotentRequest, withIdempotency } from "../http/Idempotency.ts"
import { paymentTimingChecked } from "../http/ValidationErrors.ts"
import { Invoices } from "./Invoices.ts"
import type { HandlerRequest } from "../http/HandlerRequest.ts"
import { IdempotencyStore } from "../http/IdempotencyStore.ts"

type View = InvoiceView

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
type Request<Id extends string> = HandlerRequest<typeof MerchantGroup, Id> & Pick<IdempotentRequest<View>, "endpoint">

const create = ({ invoices, view, recovered }: Context) => (request: Request<"create">) =>
  Effect.gen(function*() {
    const merchant = yield* CurrentMerchant
    return yield* withIdempotency(
      request,
      // The mode rules run before the use case looks anything up (never a 403 or 404 first), yet inside
      // the claim, so that their 400 is stored and replayed for the key like every answer of the use case.
      Effect.andThen(
        paymentTimingChecked(request.payload.paymentTiming),
        invoices.create(merchant, request.payload).pipe(
          Effect.flatMap(({ invoice, options }) => view({ invoice, options })),
          mapDomainErrors
        )
      ),
      recovered(merchant)
    )
  })

const recordPayment = ({ invoices, view, recovered }: Context) => (request: Request<"recordPayment">) =>
  Effect.gen(function*() {
    const merchant = yield* CurrentMerchant
    return yield* withIdempotency(
      request,
      invoices.recordPayment(merchant.merchantId, request.params.id, request.payload.note, merchant.livemode).pipe(Effect.flatMap(view), mapDomainErrors),
      recovered(merchant)
    )
  })

const voidInvoice = ({ invoices, view, recovered }: Context) => (request: Request<"void">) =>
  Effect.gen(function*() {
    const merchant = yield* CurrentMerchant
    return yield* withIdempotency(
      request,
      invoices.void(merchant.merchantId, request.params.id, merchant.livemode).pipe(Effect.flatMap(view), mapDomainErrors),
      recovered(merchant)
    )
  })

export const MerchantHttpLive = HttpApiBuilder.group(checkoutApi(MerchantGroup), "merchant", (handlers) =>
  Effect.gen(function*() {
    const context = yield* merchantContext
    const { invoices, view } = context
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
      .handle("void", voidInvoice(context))
      .handle("recordPayment", recordPayment(context))
  })).pipe(Layer.provide([Invoices.layer, IdempotencyStore.layer]))

export type { View }
