import { BodyRules, paymentTimingRules } from "../http/ValidationErrors.ts"
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BadRequest, Conflict, NotFound } from "../http/ApiErrors.ts"
import { DashboardAuthentication } from "../http/Authentication.ts"
import { LivemodeQuery } from "../http/LivemodeQuery.ts"
import { integerBetween, PaymentTimingOverride, text } from "../http/RequestSchemas.ts"
import { PaymentTiming } from "../domain/InvoiceResponses.ts"
import { NETWORKS } from "./Networks.ts"
import { DatabaseGate } from "../http/DatabaseGate.ts"

const oneOf = <const L extends ReadonlyArray<string>>(values: L) =>
  Schema.Literals(values).annotate({ message: `must be one of ${values.join(", ")}` }).annotateKey({ messageMissingKey: "is required" })

/** How far ahead a start index may be set: BIP32 non-hardened indexes stop at 2^31. */
export const MAX_START_INDEX = 2_147_483_647

const MethodBody = Schema.Struct({
  network: oneOf(NETWORKS),
  assetCode: oneOf(["USDT", "USDC", "BTC"] as const),
  railType: oneOf(["wallet_contract", "address_transfer"] as const),
  enabled: Schema.optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" })),
  isDefault: Schema.optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" })),
  recipientAddress: Schema.optionalKey(Schema.NullOr(text(100)).annotate({ message: "must be a string" })),
  xpub: Schema.optionalKey(Schema.NullOr(text(200)).annotate({ message: "must be a string" })),
  // Raises the key's derivation counter (never lowers it): the move to another database sets it (issue #56).
  startIndex: Schema.optionalKey(Schema.NullOr(integerBetween(0, MAX_START_INDEX)).annotate({ message: "must be an integer" })),
  // Read-only, like tokenContract below: a GET answer sent back is accepted; the value is ignored.
  nextIndex: Schema.optionalKey(Schema.NullOr(Schema.Finite).annotate({ message: "must be a number" })),
  // Read-only: accepted so that a GET answer can be sent back as it is, refused when it differs from the deployment's.
  tokenContract: Schema.optionalKey(Schema.NullOr(text(100)).annotate({ message: "must be a string" }))
}).annotate({ message: "must be an object" })

export const CheckoutSettingsBody = Schema.Struct({
  issuedBy: Schema.optionalKey(Schema.NullOr(text(120)).annotate({ message: "must be a string" })),
  paymentTiming: PaymentTimingOverride.annotateKey({ messageMissingKey: "is required" }),
  paymentMethods: Schema.Array(MethodBody).annotate({ message: "must be an array" }).check(
    Schema.isMaxLength(20, { message: "must have at most 20 methods" })
  ).annotateKey({ messageMissingKey: "is required" }),
  embedOrigins: Schema.optionalKey(Schema.Array(text(200)).annotate({
    message: "must be an array of strings",
    description: "Shop origins (https://host[:port]; loopback http:// outside production) whose pages may frame the payment page, at most 10. Left out: unchanged."
  })),
  // Read-only (a GET answer sent back); ignored.
  warnings: Schema.optionalKey(Schema.Array(Schema.String).annotate({ message: "must be an array of strings" })),
  livemode: Schema.optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" }))
}).annotate({ message: "must be a JSON object" })

const MethodView = Schema.Struct({
  network: Schema.String,
  assetCode: Schema.String,
  railType: Schema.String,
  enabled: Schema.Boolean,
  isDefault: Schema.Boolean,
  recipientAddress: Schema.NullOr(Schema.String),
  xpub: Schema.NullOr(Schema.String),
  nextIndex: Schema.NullOr(Schema.Number).annotate({
    description: "With an xpub: the derivation index the next deposit address gets (read-only; raise it with startIndex)"
  }),
  tokenContract: Schema.NullOr(Schema.String).annotate({ description: "The deployment's token contract or mint (read-only; a PUT may send it back unchanged)" })
})

export const CheckoutSettingsView = Schema.Struct({
  livemode: Schema.Boolean.annotate({
    description: "The mode whose saved settings these are: false for test settings; true on a test read before test settings are saved (test invoices then use the live settings)"
  }),
  issuedBy: Schema.NullOr(Schema.String),
  paymentTiming: Schema.Union([
    Schema.Struct({ mode: Schema.Literal("immediate"), expiresAfterMinutes: Schema.Number }),
    Schema.Struct({ mode: Schema.Literal("due_date"), dueAfterDays: Schema.Number, gracePeriodDays: Schema.Number })
  ]),
  paymentMethods: Schema.Array(MethodView),
  embedOrigins: Schema.Array(Schema.String).annotate({ description: "Shop origins whose pages may frame the payment page (the page's frame-ancestors); empty: none may" }),
  warnings: Schema.Array(Schema.String).annotate({
    description: "Plain-language risks of the saved settings, e.g. an xpub no address was ever issued from in this database"
  })
}).annotate({ identifier: "CheckoutSettings" })

const TEST_SETTINGS = "livemode=false reads or saves the test mode's settings (test invoices' payment methods, which may name testnet wallets). " +
  "Until test settings are saved, test invoices use the live settings, and the test read answers those (livemode true)."

export const CheckoutSettingsGroup = HttpApiGroup.make("checkoutSettings")
  .add(
    HttpApiEndpoint.get("get", "/api/dashboard/checkout-settings", { query: LivemodeQuery, success: CheckoutSettingsView, error: [BadRequest, NotFound] })
      .annotate(OpenApi.Summary, "Get checkout settings").annotate(OpenApi.Description, TEST_SETTINGS),
    HttpApiEndpoint.put("put", "/api/dashboard/checkout-settings", { query: LivemodeQuery, payload: CheckoutSettingsBody, success: CheckoutSettingsView,
      error: [BadRequest, Conflict] }).annotate(
        OpenApi.Summary,
        "Save checkout settings"
      ).annotate(BodyRules, paymentTimingRules)
  )
  .middleware(DashboardAuthentication)
  .middleware(DatabaseGate)
  .annotate(OpenApi.Description,
    "Checkout settings: issuer name, default payment timing, payment methods per network, asset and rail, and the shop origins that may embed the payment page.")

export { PaymentTiming }

/** The checkout settings' HTTP errors, each declared once with its status and message (the endpoints above list their statuses). */
export const CheckoutSettingsErrors = {
  notFound: () => new NotFound({ error: "Checkout configuration not found" }),
  /** A payment method refused (the message names the field; see MethodValidation.ts and PublicWallets.ts). */
  invalidMethod: (problem: string) => new BadRequest({ error: problem }),
  invalidEmbedOrigins: (problem: string) => new BadRequest({ error: problem }),
  tokenContractFixed: (index: number) =>
    new BadRequest({
      error: `paymentMethods[${index}].tokenContract is set by the deployment (CHECKOUT_TOKEN_<NETWORK>_<ASSET>) and cannot be changed here`
    }),
  noForwarderFactory: (network: string) =>
    new Conflict({
      error: `Wallet-contract payments on ${network} cannot be enabled: no forwarder factory is configured (CHECKOUT_FORWARDER_FACTORY_${network.toUpperCase()})`
    }),
  networkNotWatched: (network: string, setting: string) =>
    new Conflict({ error: `Payment methods on ${network} cannot be enabled: this deployment does not watch ${network} (${setting} is not set)` }),
  counterBehind: (index: number, highestIssued: number) =>
    new Conflict({
      error: `paymentMethods[${index}].xpub: its derivation counter is behind index ${highestIssued}, already issued in this database; ` +
        `set paymentMethods[${index}].startIndex to at least ${highestIssued + 1} so that no deposit address is issued twice`
    })
} as const
