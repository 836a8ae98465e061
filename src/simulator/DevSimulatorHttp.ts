import { Clock, Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentMerchant } from "../http/CurrentMerchant.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { merchantInvoiceView } from "../domain/InvoiceViews.ts"
import { checkoutApi } from "../http/CheckoutApi.ts"
import { DevSimulatorGroup } from "./DevSimulatorApi.ts"
import { mapDomainErrors } from "../http/ApiErrors.ts"
import { type HelperScope, TestHelpers } from "../testmode/TestHelpers.ts"
import { helperAnswer, toHelperHttpError } from "../testmode/TestHelpersHttp.ts"

const simulatedHash = () => `sim_${crypto.randomUUID().replaceAll("-", "")}`

/** The signed-in merchant's invoices of either mode. */
const ownScope = Effect.map(CurrentMerchant, (merchant): HelperScope => ({ merchantId: merchant.merchantId }))

/**
 * The development simulator: a thin caller of the test helpers (testmode/TestHelpers.ts) for the
 * dashboard session, on invoices of either mode; its own defaults (`sim_` hashes, evidence on time
 * unless `late`) are kept.
 */
export const DevSimulatorHttpLive = HttpApiBuilder.group(checkoutApi(DevSimulatorGroup), "dev", (handlers) =>
  Effect.gen(function*() {
    const helpers = yield* TestHelpers
    const { publicUrl } = yield* AppConfig
    const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))
    const answer = helperAnswer(publicUrl)
    return handlers
      .handle("simulatePayment", ({ params, payload }) =>
        Effect.flatMap(ownScope, (scope) =>
          helpers.pay(scope, params.id, {
            ...payload,
            transactionHash: payload.transactionHash ?? simulatedHash(),
            late: payload.late === true
          }).pipe(Effect.mapError(toHelperHttpError), Effect.flatMap(answer))))
      .handle("simulateConfirmations",
        ({ params, payload }) => Effect.flatMap(ownScope, (scope) => helpers.confirm(scope, params.id, payload).pipe(Effect.mapError(toHelperHttpError), Effect.flatMap(answer))))
      .handle("simulateInvalidation", ({ params, payload }) =>
        Effect.flatMap(ownScope, (scope) =>
          helpers.reorg(scope, params.id, { transactionHash: payload.transactionHash, reason: payload.reason ?? "simulated_reorg" }).pipe(
            Effect.mapError(toHelperHttpError),
            Effect.flatMap(answer)
          )))
      .handle("simulateExpiry", ({ params }) =>
        Effect.flatMap(ownScope, (scope) =>
          helpers.expire(scope, params.id).pipe(mapDomainErrors, Effect.flatMap((parts) =>
            Effect.map(now, (at) => merchantInvoiceView(parts, publicUrl, at))
          ))))
  }))
  .pipe(Layer.provide(TestHelpers.layer))
