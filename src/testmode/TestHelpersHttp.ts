import { Clock, Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { TestHelpersGroup } from "./TestHelpersApi.ts"
import { TestKeyOnly } from "../../contract/TestHelpersApi.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { merchantInvoiceView, paymentView } from "../domain/InvoiceViews.ts"
import { BadRequest, Conflict, Forbidden, NotFound, toHttpError } from "../http/ApiErrors.ts"
import { checkoutApi } from "../http/CheckoutApi.ts"
import { CurrentMerchant } from "../http/CurrentMerchant.ts"
import { type HelperResult, type HelperScope, type TestHelperError, TestHelpers } from "./TestHelpers.ts"

/** The test helpers' HTTP errors, each declared once with its status and message (the development simulator answers them too). */
export const TestHelperErrors = {
  needsTestKey: () => new Forbidden({ error: "Test helpers need a test API key" }),
  optionNotFound: () => new NotFound({ error: "paymentOptionId is not an option of this invoice" }),
  paymentNotFound: () => new NotFound({ error: "No payment of this invoice has that transactionHash" }),
  invalidAmount: (decimals: number) => new BadRequest({ error: `amount must be a positive amount with at most ${decimals} decimals` }),
  chainHash: () =>
    new BadRequest({
      error: "transactionHash must not be a real chain transaction hash: a test payment never claims a chain transaction (use other text, such as test_1)"
    }),
  evidenceRejected: (reason: string) => new Conflict({ error: `Evidence rejected: ${reason}` })
} as const

/** The HTTP form of the helpers' errors. */
export const toHelperHttpError = (error: TestHelperError) => {
  switch (error._tag) {
    case "InvoiceNotFound":
      return toHttpError(error)
    case "HelperOptionNotFound":
      return TestHelperErrors.optionNotFound()
    case "HelperPaymentNotFound":
      return TestHelperErrors.paymentNotFound()
    case "HelperInvalidAmount":
      return TestHelperErrors.invalidAmount(error.decimals)
    case "HelperChainHashRefused":
      return TestHelperErrors.chainHash()
    case "HelperEvidenceRejected":
      return TestHelperErrors.evidenceRejected(error.reason)
  }
}

const isTestKey = (merchant: CurrentMerchant["Service"]) => merchant.via === "api_key" && !merchant.livemode

/** A helper's answer: the payment it wrote and the invoice as the merchant API shows it now (the development simulator answers the same). */
export const helperAnswer = (publicUrl: string) => (result: HelperResult) =>
  Effect.map(Clock.currentTimeMillis, (millis) => ({
    payment: paymentView(result.payment),
    invoice: merchantInvoiceView(result.parts, publicUrl, new Date(millis))
  }))

/** The helpers' gate (TestKeyOnly): anything but a test key is refused with 403 before its body is read. */
export const TestKeyOnlyLive = Layer.succeed(TestKeyOnly,
  (httpEffect) => Effect.andThen(Effect.flatMap(CurrentMerchant, (merchant) => isTestKey(merchant) ? Effect.void : Effect.fail(TestHelperErrors.needsTestKey())), httpEffect))

/** A test key's scope: its merchant's test invoices (a live invoice is 404). Anything but a test key is refused with 403 (again: TestKeyOnly did first). */
const testScope = Effect.flatMap(CurrentMerchant, (merchant): Effect.Effect<HelperScope, Forbidden> =>
  isTestKey(merchant)
    ? Effect.succeed({ merchantId: merchant.merchantId, livemode: false })
    : Effect.fail(TestHelperErrors.needsTestKey()))

export const TestHelpersHttpLive = HttpApiBuilder.group(checkoutApi(TestHelpersGroup), "testHelpers", (handlers) =>
  Effect.gen(function*() {
    const helpers = yield* TestHelpers
    const { publicUrl } = yield* AppConfig
    const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))
    const answer = helperAnswer(publicUrl)
    return handlers
      .handle("pay",
        ({ params, payload }) => Effect.flatMap(testScope, (scope) => helpers.pay(scope, params.id, payload).pipe(Effect.mapError(toHelperHttpError), Effect.flatMap(answer))))
      .handle("confirm",
        ({ params, payload }) => Effect.flatMap(testScope, (scope) => helpers.confirm(scope, params.id, payload).pipe(Effect.mapError(toHelperHttpError), Effect.flatMap(answer))))
      .handle("reorg",
        ({ params, payload }) => Effect.flatMap(testScope, (scope) => helpers.reorg(scope, params.id, payload).pipe(Effect.mapError(toHelperHttpError), Effect.flatMap(answer))))
      .handle("expire", ({ params }) =>
        Effect.flatMap(testScope, (scope) =>
          helpers.expire(scope, params.id).pipe(
            Effect.mapError(toHttpError),
            Effect.flatMap((parts) => Effect.map(now, (at) => merchantInvoiceView(parts, publicUrl, at)))
          )))
  }))
  .pipe(Layer.provide([TestHelpers.layer, TestKeyOnlyLive]))
