import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, OpenApi } from "effect/http-api"
import { BadRequest, Conflict, Forbidden, NotFound } from "./ApiErrors.ts"
import { MerchantAuthentication } from "./Authentication.ts"
import type { CurrentMerchant } from "./CurrentMerchant.ts"
import { InvoiceView, PaymentView } from "./InvoiceResponses.ts"
import { InvoiceIdParams, integerBetween, text, VoidBody } from "./RequestSchemas.ts"

const required = { messageMissingKey: "is required" }
const Confirmations = integerBetween(0, 1_000_000)
const TransactionHash = text(200).annotate({ description: "Any text naming the test transaction (not a real chain transaction's hash)." })

/** What pay, confirm and reorg answer: the payment fed and the invoice as it is afterwards. */
export const TestHelperResult = Schema.Struct({ payment: PaymentView, invoice: InvoiceView }).annotate({ identifier: "TestHelperResult" })

export const TestPayBody = Schema.Struct({
  paymentOptionId: text(64).annotateKey(required),
  amount: Schema.String.annotate({ message: "must be a decimal string", description: "In the option's asset units, e.g. \"12.5\"" }).check(
    Schema.isPattern(/^\d{1,40}(\.\d{1,40})?$/, { message: "must be a decimal string such as \"12.5\" (at most 40 digits before and after the point)" })
  ).annotateKey(required),
  confirmations: Schema.optionalKey(Confirmations.annotate({ description: "Default 0" })),
  transactionHash: Schema.optionalKey(TransactionHash.annotate({ description: "Generated (test_…) when absent; names the payment for confirm and reorg." }))
}).annotate({ message: "must be a JSON object" })

export const TestConfirmBody = Schema.Struct({
  transactionHash: TransactionHash.annotateKey(required),
  confirmations: Confirmations.annotateKey(required)
}).annotate({ message: "must be a JSON object" })

export const TestReorgBody = Schema.Struct({ transactionHash: TransactionHash.annotateKey(required) }).annotate({ message: "must be a JSON object" })

/**
 * Refuses anything but a test key with 403 `Test helpers need a test API key`, after authentication
 * and before the body is read: a live key or a session gets that answer whatever it sends.
 */
export class TestKeyOnly extends HttpApiMiddleware.Service<TestKeyOnly, { requires: CurrentMerchant }>()("Http/TestKeyOnly", { error: Forbidden }) {}

const TEST_KEY_ONLY = "Test API key (svc_test_…) only: a live key or a session gets 403 `Test helpers need a test API key`, a live invoice 404."

/**
 * Test helpers (issue #55), in every deployment including production: a test key's invoices are
 * paid, confirmed, reorganised away and expired without a chain, through the same entry point as
 * the chain watchers' evidence, so that the invoice, its events and its test webhooks go as real
 * ones would.
 */
export const TestHelpersGroup = HttpApiGroup.make("testHelpers")
  .add(
    HttpApiEndpoint.post("pay", "/api/checkout/test-helpers/invoices/:id/pay", {
      params: InvoiceIdParams,
      payload: TestPayBody,
      success: TestHelperResult,
      error: [BadRequest, Forbidden, NotFound, Conflict]
    }).annotate(OpenApi.Summary, "Pay a test invoice").annotate(OpenApi.Description, `A payment of \`amount\` to the option, seen now. ${TEST_KEY_ONLY}`),
    HttpApiEndpoint.post("confirm", "/api/checkout/test-helpers/invoices/:id/confirm", {
      params: InvoiceIdParams,
      payload: TestConfirmBody,
      success: TestHelperResult,
      error: [BadRequest, Forbidden, NotFound, Conflict]
    }).annotate(OpenApi.Summary, "Confirm a test payment").annotate(OpenApi.Description, `The payment with that hash now has \`confirmations\`. ${TEST_KEY_ONLY}`),
    HttpApiEndpoint.post("reorg", "/api/checkout/test-helpers/invoices/:id/reorg", {
      params: InvoiceIdParams,
      payload: TestReorgBody,
      success: TestHelperResult,
      error: [BadRequest, Forbidden, NotFound, Conflict]
    }).annotate(OpenApi.Summary, "Reorganise a test payment away").annotate(
      OpenApi.Description,
      `The payment with that hash is invalidated as a chain reorganisation does (\`chain_reorganization\`). ${TEST_KEY_ONLY}`
    ),
    HttpApiEndpoint.post("expire", "/api/checkout/test-helpers/invoices/:id/expire", {
      params: InvoiceIdParams,
      payload: VoidBody,
      success: InvoiceView,
      error: [BadRequest, Forbidden, NotFound]
    }).annotate(OpenApi.Summary, "Expire a test invoice").annotate(
      OpenApi.Description,
      `Moves the payable deadline to now: an unpaid or partly paid invoice expires (a partly paid one opens its partial_payment exception); a paid one keeps its status. ${TEST_KEY_ONLY}`
    )
  )
  // Declared first, so that it runs inside the authentication that provides CurrentMerchant.
  .middleware(TestKeyOnly)
  .middleware(MerchantAuthentication)
  .annotate(OpenApi.Description, "Test helpers: drive a test invoice through its life with a test API key (X-Api-Key: svc_test_…).")
