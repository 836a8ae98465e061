import { RateLimited } from "../domain/Errors.ts"
import { RequestErrors, TransportAnswers } from "./ApiErrors.ts"

/**
 * What the generated OpenAPI document cannot know from the schemas: how each route authenticates
 * (so that `/docs` "try it" sends the API key or the session), a description of every operation,
 * an example of every error, and the webhooks the service sends. Applied once to the whole
 * document (`OpenApi.Transform`).
 */

const API_KEY = { apiKey: [] }
const SESSION_COOKIE = { sessionCookie: [] }
const BEARER = { bearer: [] }

export const SECURITY_SCHEMES = {
  apiKey: { type: "apiKey", in: "header", name: "X-Api-Key", description: "A checkout API key (server-side only; created in the dashboard)." },
  sessionCookie: { type: "apiKey", in: "cookie", name: "checkout_session", description: "The dashboard session cookie set by log in." },
  bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "The dashboard session token returned by log in." }
} as const

/** Which credentials a route takes, by path: the spec's order for merchant routes, sessions for the dashboard. */
export const securityOf = (path: string): ReadonlyArray<Record<string, ReadonlyArray<never>>> => {
  if (path.startsWith("/api/checkout/invoices")) return [API_KEY, SESSION_COOKIE, BEARER]
  if (path.startsWith("/api/checkout/pay/") || path.startsWith("/api/health") || path === "/api/auth/signup" || path === "/api/auth/login") return []
  return [SESSION_COOKIE, BEARER]
}

const DESCRIPTIONS: Readonly<Record<string, string>> = {
  "merchant.create": "Creates a USD invoice with a quoted payment option per enabled payment method. Send an Idempotency-Key to retry safely.",
  "merchant.detail": "The invoice with its payment options, payments and exception state.",
  "merchant.status": "The invoice's status, amounts and confirmations: the cheap read to poll.",
  "merchant.void": "Voids an invoice that has received no payment; a payment that arrives later opens a late_payment exception.",
  "merchant.recordPayment": "Records a payment made outside the chain (paid_out_of_band) with a note.",
  "public.invoice": "The invoice as the hosted payment page shows it to the payer: no merchant-only fields, no notes.",
  "public.status": "The payer-facing status of an invoice, for the payment page to poll.",
  "auth.signup": "Creates a merchant account and its first session.",
  "auth.login": "Starts a dashboard session: sets the session cookie and returns the token.",
  "auth.logout": "Ends the current dashboard session.",
  "keys.create": "Creates a checkout API key; the raw key is shown once. At most three active keys.",
  "keys.list": "The account's API keys by prefix (never the raw keys).",
  "keys.revoke": "Revokes an API key: refused from the next request on.",
  "dashboardInvoices.closeException": "Closes an invoice's open exception with accept_late_payment, mark_paid_out_of_band or close_unpaid and a note.",
  "dev.simulatePayment": "Development only: reports a payment to an option, as a chain watcher would.",
  "dev.simulateConfirmations": "Development only: sets a simulated payment's confirmations.",
  "dev.simulateInvalidation": "Development only: invalidates a simulated payment (a reorganisation).",
  "dev.simulateExpiry": "Development only: moves the invoice's deadline to now and runs the expiry.",
  "checkoutSettings.get": "The account's checkout settings and payment methods (the defaults until saved).",
  "checkoutSettings.put": "Saves the checkout settings and payment methods; field errors name the field.",
  "webhooks.getSettings": "The webhook URL and the events it receives.",
  "webhooks.putSettings": "Sets the webhook URL and the events it receives.",
  "webhooks.rotateSecret": "Creates or rotates the webhook signing secret; shown once.",
  "webhooks.listDeliveries":
    "The webhook delivery log, newest first, with search (q: a delivery or invoice id, whole or its first 8 hex digits or more; an event; part of the URL or of the invoice's merchant reference; a response code) and filters.",
  "webhooks.redeliver": "Sends a delivered or failed webhook event again.",
  "chainWatchers.list": "Each network's watcher: configured, processed height, lag and last error.",
  "sweeps.list": "Forwarder sweeps of wallet-contract payments to the recipient."
}

const ERROR_EXAMPLES: Readonly<Record<string, { readonly description: string; readonly error: string }>> = {
  "400": { description: "The request is malformed or a field is invalid", error: "currency is not a known field" },
  "401": { description: "No valid credentials", error: "Missing API key or session" },
  "403": { description: "The account may not do this", error: "Forbidden" },
  "404": { description: "Not found, or not the calling account's", error: "Invoice not found" },
  "409": { description: "The resource's state does not allow it", error: "Only an invoice awaiting payment can be voided; this invoice is confirmed" },
  "413": { description: "The request body is larger than the service accepts (CHECKOUT_MAX_BODY_BYTES)", error: TransportAnswers.bodyTooLarge(65536).error },
  "415": { description: "The body is not JSON", error: TransportAnswers.notJson.error },
  "429": { description: "Rate limit exceeded (see Retry-After)", error: RequestErrors.rateLimited(new RateLimited({ retryAfterSeconds: 60 })).error },
  "502": { description: "A backend the request needs failed", error: "The price source is unavailable" },
  "503": {
    description: "Temporarily unavailable (see Retry-After)",
    error: TransportAnswers.databaseUnavailable(5).error
  }
}

const REQUEST_EXAMPLES: Readonly<Record<string, unknown>> = {
  "merchant.create": {
    amountUsd: 49.99,
    productName: "Annual plan",
    merchantReference: "order-1042",
    customerEmail: "payer@example.com",
    redirectUrl: "https://shop.example.com/thanks"
  },
  "merchant.void": {},
  "merchant.recordPayment": { note: "Paid by bank transfer, ref 8841" },
  "dashboardInvoices.closeException": { action: "accept_late_payment", note: "Accepted: paid minutes after expiry" },
  "public.prepareSolanaWalletPayment": {
    paymentOptionId: "5f0c6a2e-8d8f-4a53-9a57-3d1c2b7f9e10",
    payerPublicKey: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
  },
  "auth.signup": { email: "owner@shop.example.com", password: "a long passphrase" },
  "auth.login": { email: "owner@shop.example.com", password: "a long passphrase" }
}

const METHODS = ["get", "put", "post", "delete", "patch"] as const

/** The parts of the generated document this file reads and completes (Effect hands it over untyped). */
interface JsonSchema {
  readonly $ref?: string
  properties?: Record<string, JsonSchema>
  anyOf?: ReadonlyArray<JsonSchema>
  type?: string
  format?: string
  required?: ReadonlyArray<string>
  additionalProperties?: boolean
  example?: unknown
}
interface MediaType {
  schema?: JsonSchema
  example?: unknown
}
interface Response {
  description?: string
  content?: Record<string, MediaType>
}
interface Operation {
  operationId?: string
  description?: string
  security?: ReadonlyArray<Record<string, ReadonlyArray<never>>>
  requestBody?: { content?: Record<string, MediaType> }
  responses?: Record<string, Response>
}
type PathItem = Partial<Record<typeof METHODS[number], Operation>>
interface Document {
  paths?: Record<string, PathItem>
  webhooks?: Record<string, PathItem>
  tags?: Array<{ readonly name: string; readonly description?: string }>
  components?: { schemas?: Record<string, JsonSchema>; securitySchemes?: Record<string, unknown> }
}

/** The formats of request fields whose schema is a plain string (validated by the route's own checks). */
const FIELD_FORMATS: Readonly<Record<string, string>> = { redirectUrl: "uri", url: "uri", customerEmail: "email", email: "email" }

/** Adds `format` to the string branch of each known field of a request body's schema. */
const addFormats = (schema: JsonSchema | undefined) => {
  for (const [field, property] of Object.entries(schema?.properties ?? {})) {
    const format = FIELD_FORMATS[field]
    if (format === undefined) continue
    for (const branch of property.anyOf ?? [property]) if (branch.type === "string") branch.format ??= format
  }
}

/** Liveness answers without the database; every other route answers 503 while the database does not. */
const answersWithoutDatabase = (path: string) => path === "/api/health"

const errorResponse = (status: string): Response => ({
  description: ERROR_EXAMPLES[status]!.description,
  content: {
    "application/json": {
      schema: { type: "object", required: ["error"], properties: { error: { type: "string" } }, additionalProperties: false },
      example: { error: ERROR_EXAMPLES[status]!.error }
    }
  }
})

/** Answers the edge gives whatever the route: 413 for an oversized body, 503 while the database does not answer. */
const addEdgeAnswers = (path: string, operation: Operation) => {
  const responses = operation.responses ??= {}
  if (operation.requestBody !== undefined) responses["413"] ??= errorResponse("413")
  if (!answersWithoutDatabase(path)) responses["503"] ??= errorResponse("503")
}

/** The request body's example, also on its schema, and the formats of its known string fields. */
const completeRequestBody = (document: Document, operation: Operation) => {
  const body = operation.requestBody?.content?.["application/json"]
  const ref = body?.schema?.$ref
  addFormats(ref === undefined ? body?.schema : document.components?.schemas?.[ref.split("/").pop()!])
  const example = REQUEST_EXAMPLES[operation.operationId ?? ""]
  if (example === undefined || body === undefined) return
  body.example = example
  // "Try it" clients (the /docs page) build the body from the schema, not the media type's
  // example: without this they send every optional field as "" and both timing shapes merged.
  body.schema = { ...body.schema, example }
}

const describeErrors = (operation: Operation) => {
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    const known = ERROR_EXAMPLES[status]
    if (known === undefined) continue
    response.description = known.description
    const json = response.content?.["application/json"]
    if (json !== undefined) json.example = { error: known.error }
  }
}

export const documentOpenApi = (spec: Record<string, unknown>): Record<string, unknown> => {
  const document = spec as Document
  document.components = { ...document.components, securitySchemes: { ...document.components?.securitySchemes, ...SECURITY_SCHEMES } }
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method]
      if (operation === undefined) continue
      operation.security = securityOf(path)
      addEdgeAnswers(path, operation)
      operation.description ??= DESCRIPTIONS[operation.operationId ?? ""]
      completeRequestBody(document, operation)
      describeErrors(operation)
    }
  }
  return spec
}

const WEBHOOKS_TAG = {
  name: "webhookEvents",
  description:
    "The POST requests the service sends to the merchant's webhook URL. Verify X-Checkout-Signature over the raw body, then fetch the invoice before fulfilling: delivery is at-least-once and unordered."
}

/**
 * The OpenAPI 3.1 `webhooks` section: the paths of `events` (a document generated from the
 * webhooks' own HttpApi, one path per event) become the entries, named by event, and their schemas
 * join the document's components.
 */
export const withWebhooks = (spec: Record<string, unknown>, events: object): Record<string, unknown> => {
  const document = spec as Document
  const generated = events as Document
  document.webhooks = Object.fromEntries(Object.entries(generated.paths ?? {}).map(([path, item]) => [path.replace(/^\//, ""), item]))
  document.components = { ...document.components, schemas: { ...generated.components?.schemas, ...document.components?.schemas } }
  document.tags = [...(document.tags ?? []), WEBHOOKS_TAG]
  return spec
}
