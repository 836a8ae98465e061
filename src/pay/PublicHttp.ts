import { Clock, Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { RateLimits } from "../accounts/RateLimits.ts"
import { SolanaPrepare } from "../chains/solana/SolanaPrepare.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { publicInvoiceView, publicStatusView } from "../domain/InvoiceViews.ts"
import { checkoutApi } from "../http/CheckoutApi.ts"
import { clientAddress, mapDomainErrors, orTooManyRequests } from "../http/ApiErrors.ts"
import { Invoices } from "../invoices/Invoices.ts"
import { StatusStream } from "../invoices/StatusStream.ts"
import { PayErrors } from "./PublicApi.ts"
import { TestPayments } from "./TestPayments.ts"
import { PublicGroup } from "./PublicApi.ts"

export const PublicHttpLive = HttpApiBuilder.group(checkoutApi(PublicGroup), "public", (handlers) =>
  Effect.gen(function*() {
    const invoices = yield* Invoices
    const solana = yield* SolanaPrepare
    const rateLimits = yield* RateLimits
    const statusStream = yield* StatusStream
    const testPayments = yield* TestPayments
    const { publicUrl } = yield* AppConfig
    return handlers
      .handle("invoice", ({ params }) =>
        invoices.getPublic(params.id).pipe(
          Effect.flatMap((parts) => Effect.map(Clock.currentTimeMillis, (millis) => publicInvoiceView(parts, publicUrl, new Date(millis)))),
          mapDomainErrors
        ))
      .handle("status", ({ params }) =>
        invoices.getPublic(params.id).pipe(
          Effect.flatMap((parts) => Effect.map(Clock.currentTimeMillis, (millis) => publicStatusView(parts, new Date(millis)))),
          mapDomainErrors
        ))
      .handle("statusEvents", ({ params, headers }) =>
        Effect.flatMap(clientAddress, (client) => statusStream.open(params.id, headers["last-event-id"], client)).pipe(
          Effect.catchTag("StreamLimitReached", ({ max }) => Effect.fail(PayErrors.tooManyStatusStreams(max))),
          Effect.catchTag("InvoiceNotFound", (error) => mapDomainErrors(Effect.fail(error)))
        ))
      .handle("prepareSolanaWalletPayment", ({ params, payload }) =>
        Effect.gen(function*() {
          yield* orTooManyRequests(rateLimits.solanaPrepare(yield* clientAddress))
          return yield* mapDomainErrors(solana.prepare(params.id, payload))
        }))
      .handle("simulateTestPayment", ({ params, payload }) =>
        Effect.gen(function*() {
          yield* orTooManyRequests(rateLimits.testPayment(yield* clientAddress))
          yield* testPayments.simulate(params.id, payload).pipe(
            Effect.catchTag("TestPaymentRefused", ({ message }) => Effect.fail(PayErrors.testPaymentRefused(message))),
            Effect.catchTag("TestPaymentOptionUnknown", () => Effect.fail(PayErrors.testPaymentOptionUnknown())),
            Effect.catchTag("InvoiceNotFound", (error) => mapDomainErrors(Effect.fail(error)))
          )
          const parts = yield* mapDomainErrors(invoices.getPublic(params.id))
          return publicStatusView(parts, new Date(yield* Clock.currentTimeMillis))
        }))
  })).pipe(Layer.provide([RateLimits.layer, Invoices.layer, SolanaPrepare.layer, StatusStream.layer, TestPayments.layer]))
