import { Effect, Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { BadRequest, Conflict, type DomainError, NotFound, ServiceUnavailable, toHttpError, TooManyRequests } from "../http/ApiErrors.ts"
import { DashboardAuthentication } from "../http/Authentication.ts"
import { LivemodeQuery } from "../http/LivemodeQuery.ts"
import type * as Errors from "../domain/Errors.ts"
import { InvoiceIdParams, requiredNote, text, UuidParam } from "../http/RequestSchemas.ts"
import { PublicRefundView, REFUND_STATUSES, RefundableView, RefundView } from "./Refund.ts"
import { DatabaseGate } from "../http/DatabaseGate.ts"

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export const RequestRefundBody = Schema.Struct({
  paymentOptionId: Schema.String.annotate({ message: "must be a string" }).check(Schema.isUUID(undefined, { message: "must be a valid UUID" }))
    .annotateKey({ messageMissingKey: "is required" }),
  refundAddress: Schema.String.annotate({ message: "must be a string" }).annotateKey({ messageMissingKey: "is required" }),
  email: Schema.optionalKey(
    Schema.String.annotate({ message: "must be a valid email address" }).check(
      Schema.makeFilter<string>((value) => value.length <= 254 && EMAIL.test(value), { message: "must be a valid email address" })
    )
  ),
  signature: Schema.optionalKey(text(200).annotate({
    description:
      "The paying wallet's signature of the refund message (docs/refunds.md): EVM EIP-191 personal_sign as 0x hex; Solana signMessage's 64 bytes as base58 or base64. Not offered on bitcoin."
  })),
  signer: Schema.optionalKey(
    text(100).annotate({ description: "Who signed: the Solana public key (required with a Solana signature); on EVM optional, checked against the recovered address" })
  )
}).annotate({ message: "must be a JSON object", identifier: "RequestRefund" })

export const RejectRefundBody = Schema.Struct({
  note: requiredNote(500)
}).annotate({ message: "must be a JSON object", identifier: "RejectRefund" })

export const PrepareRefundTransactionBody = Schema.Struct({
  payerPublicKey: Schema.String.annotate({ message: "must be a string" }).annotateKey({ messageMissingKey: "is required" })
}).annotate({ message: "must be a JSON object", identifier: "PrepareRefundTransaction" })

export const InvoiceRefunds = Schema.Struct({
  refundable: Schema.Array(RefundableView),
  refunds: Schema.Array(PublicRefundView),
  signatureDomain: Schema.String.annotate({ description: "The service's host, the first word of the refund message a payer signs" })
}).annotate({ identifier: "InvoiceRefunds" })

export const RefundList = Schema.Struct({ data: Schema.Array(RefundView) }).annotate({ identifier: "RefundList" })

/** An unsigned Solana transfer of a refund for the merchant's wallet to sign and send. */
export const SolanaRefundTransaction = Schema.Struct({
  transaction: Schema.String.annotate({
    description:
      "Base64 of an unsigned legacy mainnet transaction, fee payer = the merchant's wallet: idempotent creation of the refund address's associated token account, a memo, then transferChecked of the refund amount carrying the refund's reference"
  }),
  blockhash: Schema.String,
  lastValidBlockHeight: Schema.Number,
  refundId: Schema.String,
  amountAtomic: Schema.String.annotate({ description: "Amount of the transfer in the mint's smallest units (the refund amount)" })
}).annotate({ identifier: "SolanaRefundTransaction" })

const RefundIdParams = Schema.Struct({ id: UuidParam })

export const PublicRefundsGroup = HttpApiGroup.make("publicRefunds")
  .add(
    HttpApiEndpoint.get("list", "/api/checkout/pay/:id/refunds", {
      params: InvoiceIdParams,
      success: InvoiceRefunds,
      error: NotFound
    }).annotate(OpenApi.Summary, "List an invoice's refunds and what is refundable (payer)").annotate(
      OpenApi.Description,
      "What the invoice refunds now, per payment option (only confirmed payments count: an overpayment beyond the invoice's amount, or everything of an invoice closed unpaid), and the refunds requested."
    ),
    HttpApiEndpoint.post("request", "/api/checkout/pay/:id/refunds", {
      params: InvoiceIdParams,
      payload: RequestRefundBody,
      success: [PublicRefundView.pipe(HttpApiSchema.status(201)), PublicRefundView],
      error: [BadRequest, NotFound, Conflict, TooManyRequests]
    }).annotate(OpenApi.Summary, "Request a refund (payer)").annotate(
      OpenApi.Description,
      "The payer asks for everything refundable on one payment option, to an address of theirs on the option's network (201). While the option's requests are pending, another address stands beside them (up to 5; the merchant chooses one); a repeat with the same address answers the pending refund (200). A request signed by the address that paid (signature, signer) is marked verified and replaces the pending ones; an unsigned one is then refused (409). Once the merchant chose or rejected, further requests get 409. The merchant sends the refund from their own wallet; the service never holds funds. Limited per client IP (CHECKOUT_REFUND_RATE_LIMIT a minute)."
    )
  )
  .annotate(OpenApi.Description, "Public refund endpoints of the payment page: no authentication; CORS open to any origin (no credentials).")
  .middleware(DatabaseGate)

export const DashboardRefundsGroup = HttpApiGroup.make("dashboardRefunds")
  .add(
    HttpApiEndpoint.get("list", "/api/dashboard/refunds", {
      query: {
        status: Schema.optionalKey(Schema.Literals(REFUND_STATUSES).annotate({ message: `must be one of ${REFUND_STATUSES.join(", ")}` })),
        ...LivemodeQuery
      },
      success: RefundList,
      error: BadRequest
    }).annotate(OpenApi.Summary, "List refunds").annotate(OpenApi.Description,
      "The refunds of the account's live invoices (of its test invoices with livemode=false), newest first (at most 100), optionally of one status."),
    HttpApiEndpoint.get("invoice", "/api/dashboard/invoices/:id/refunds", {
      params: InvoiceIdParams,
      success: RefundList,
      error: NotFound
    }).annotate(OpenApi.Summary, "List an invoice's refunds").annotate(OpenApi.Description, "One invoice's refunds, oldest first."),
    HttpApiEndpoint.post("choose", "/api/dashboard/refunds/:id/choose", {
      params: RefundIdParams,
      success: RefundView,
      error: [NotFound, Conflict]
    }).annotate(OpenApi.Summary, "Choose a refund request").annotate(
      OpenApi.Description,
      "Picks one of a payment option's pending refund requests: it is chosen and the others are rejected (note: The merchant chose another refund request). 409 when it is not requested."
    ),
    HttpApiEndpoint.post("reject", "/api/dashboard/refunds/:id/reject", {
      params: RefundIdParams,
      payload: RejectRefundBody,
      success: RefundView,
      error: [NotFound, Conflict]
    }).annotate(OpenApi.Summary, "Reject a refund").annotate(OpenApi.Description, "Declines a requested refund with a note the payer sees; final."),
    HttpApiEndpoint.post("prepareSolanaTransaction", "/api/dashboard/refunds/:id/prepare-solana-transaction", {
      params: RefundIdParams,
      payload: PrepareRefundTransactionBody,
      success: SolanaRefundTransaction,
      error: [BadRequest, NotFound, Conflict, ServiceUnavailable]
    }).annotate(OpenApi.Summary, "Prepare a Solana refund transaction").annotate(OpenApi.Description,
      "An unsigned Solana transfer of a requested Solana refund from the merchant's wallet (payerPublicKey), for the wallet to sign and send.")
  )
  .middleware(DashboardAuthentication)
  .middleware(DatabaseGate)
  .annotate(OpenApi.Description, "Refunds the payers requested: review, reject, and pay from the merchant's own wallet (dashboard session or bearer JWT).")

type RefundError = Errors.PaymentOptionNotFound | Errors.NothingToRefund | Errors.RefundAlreadyRequested | Errors.RefundNotFound | Errors.RefundStatusConflict

/** The refunds feature's errors as HTTP errors, each status and message written once here (the endpoints above list their statuses). */
const refundHttpError = (error: RefundError | DomainError) => {
  switch (error._tag) {
    case "PaymentOptionNotFound":
      return new NotFound({ error: "Payment option not found" })
    case "NothingToRefund":
      return new Conflict({ error: "Nothing to refund on this payment option" })
    case "RefundAlreadyRequested":
      return new Conflict({ error: "A refund was already requested for this payment option" })
    case "RefundNotFound":
      return new NotFound({ error: "Refund not found" })
    case "RefundStatusConflict":
      return new Conflict({ error: error.message })
    default:
      return toHttpError(error)
  }
}

/** A refunds use case's failures as their HTTP errors (the shared domain errors through `toHttpError`, ApiErrors.ts). */
export const mapRefundErrors = <A, R>(effect: Effect.Effect<A, RefundError | DomainError, R>) => Effect.mapError(effect, refundHttpError)
