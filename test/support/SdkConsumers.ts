// The programs of test/integration/sdk-package.test.ts: what a merchant writes against the installed
// SDK, as ES module and CommonJS scripts, strict TypeScript, and an Effect program.

/** Creates an invoice (and replays it by its key), verifies the delivered webhook, and prints what it saw as JSON. */
const MERCHANT_BODY = `const { BASE_URL, API_KEY, WEBHOOK_BODY, WEBHOOK_SIGNATURE, WEBHOOK_SECRET, IDEMPOTENCY_KEY } = process.env
const checkout = createCheckoutClient({ baseUrl: BASE_URL, apiKey: API_KEY, maxRetries: 0, timeoutMs: 20000 })
const order = { amountUsd: 12.5, merchantReference: IDEMPOTENCY_KEY }
const invoice = await checkout.invoices.create(order, { idempotencyKey: IDEMPOTENCY_KEY })
const again = await checkout.invoices.create(order, { idempotencyKey: IDEMPOTENCY_KEY })
const event = parseWebhookEvent(Buffer.from(WEBHOOK_BODY), WEBHOOK_SIGNATURE, WEBHOOK_SECRET)
const thrown = (call) => { try { call(); return null } catch (error) { return error } }
const badSignature = thrown(() => parseWebhookEvent(WEBHOOK_BODY, "0".repeat(64), WEBHOOK_SECRET))
const missing = await checkout.invoices.retrieve("00000000-0000-4000-8000-000000000000").catch((error) => error)
console.log(JSON.stringify({
  id: invoice.id,
  status: invoice.status,
  paymentUrl: invoice.paymentUrl,
  replayed: again.id === invoice.id,
  event: event.event,
  tamperedAccepted: verifyWebhookSignature(WEBHOOK_BODY + " ", WEBHOOK_SIGNATURE, WEBHOOK_SECRET),
  badSignature: badSignature instanceof WebhookSignatureError ? badSignature.name : String(badSignature),
  missingKey: thrown(() => createCheckoutClient({ baseUrl: BASE_URL })).message,
  notFound: missing instanceof CheckoutError ? { name: missing.name, status: missing.status, retryable: missing.retryable } : String(missing)
}))
`

const NAMES = "CheckoutError, createCheckoutClient, parseWebhookEvent, verifyWebhookSignature, WebhookSignatureError"

export const CONSUMER_ESM = `import { ${NAMES} } from "@checkout-invoicing/sdk"\n${MERCHANT_BODY}`
export const CONSUMER_CJS = `const { ${NAMES} } = require("@checkout-invoicing/sdk")\nvoid (async () => {\n${MERCHANT_BODY}})()\n`

export const EFFECT_ESM = `import { Effect } from "effect"
import { CheckoutClient, NotFound } from "@checkout-invoicing/sdk/effect"

const { BASE_URL, API_KEY, IDEMPOTENCY_KEY } = process.env
const program = Effect.gen(function*() {
  const { invoices } = yield* CheckoutClient
  const invoice = yield* invoices.create({ amountUsd: 4.2 }, { idempotencyKey: IDEMPOTENCY_KEY })
  const status = yield* invoices.status(invoice.id)
  const missing = yield* Effect.flip(invoices.retrieve("00000000-0000-4000-8000-000000000000"))
  return { id: invoice.id, status: status.status, missing: missing instanceof NotFound ? "NotFound" : String(missing) }
})
console.log(JSON.stringify(await program.pipe(Effect.provide(CheckoutClient.layer({ baseUrl: BASE_URL, apiKey: API_KEY, maxRetries: 0 })), Effect.runPromise)))
`

/** A typed merchant module: the types must be the SDK's (a wrong amount is an error), not `any`. */
const TYPED_CONSUMER =
  `import { CheckoutError, createCheckoutClient, type CheckoutClientOptions, type Invoice, parseWebhookEvent, type WebhookEvent } from "@checkout-invoicing/sdk"

const options: CheckoutClientOptions = { baseUrl: "https://checkout.example.com", apiKey: "svc_live_x", maxRetries: 0, timeoutMs: 5000, retryBudgetMs: 0 }
const checkout = createCheckoutClient(options)

export const paymentUrlOf = async (order: string): Promise<string> => {
  try {
    const invoice: Invoice = await checkout.invoices.create({ amountUsd: 10, merchantReference: order }, { idempotencyKey: order })
    return invoice.paymentUrl
  } catch (error) {
    if (!(error instanceof CheckoutError) || !error.retryable) throw error
    const status: number | null = error.status
    const requestId: string | null = error.requestId
    return \`retry in \${error.retryAfter ?? 1} s (\${status ?? "no answer"}, \${requestId ?? "no request id"}): \${error.error}\`
  }
}

export const onWebhook = (rawBody: Uint8Array, signature: string | undefined, secret: string): string => {
  const event: WebhookEvent = parseWebhookEvent(rawBody, signature, secret)
  return event.event === "webhook_test" ? "test" : event.invoice.status
}

// @ts-expect-error amountUsd is a number
export const wrong = checkout.invoices.create({ amountUsd: "10" })
`

/** A typed Effect program on /effect: the API's own schemas type the payload and the answers. */
const TYPED_EFFECT_CONSUMER = `import { Effect } from "effect"
import { CheckoutClient, NotFound } from "@checkout-invoicing/sdk/effect"

export const statusOf = (order: string): Effect.Effect<string, unknown> =>
  Effect.gen(function*() {
    const { invoices } = yield* CheckoutClient
    const invoice = yield* invoices.create({ amountUsd: 10, merchantReference: order }, { idempotencyKey: order })
    const status = yield* invoices.status(invoice.id)
    return status.status
  }).pipe(
    Effect.catchIf((error) => error instanceof NotFound, (error) => Effect.succeed(error.error)),
    Effect.provide(CheckoutClient.layer({ baseUrl: "https://checkout.example.com", apiKey: "svc_live_x", maxRetries: 0 }))
  )

// @ts-expect-error amountUsd is a number
export const wrong = Effect.flatMap(CheckoutClient, ({ invoices }) => invoices.create({ amountUsd: "10" }))
`

export const CONSUMER_TS = { "consumer.mts": TYPED_CONSUMER, "consumer.cts": TYPED_CONSUMER, "consumer.ts": TYPED_CONSUMER, "effect-consumer.ts": TYPED_EFFECT_CONSUMER }

const tsconfig = (module: string, moduleResolution: string, files: ReadonlyArray<string>, platform: { readonly lib: ReadonlyArray<string>; readonly skipLibCheck: boolean }) =>
  JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: "ES2022", types: [], module, moduleResolution, ...platform }, files })
/** The SDK's own declarations are checked too (no skipLibCheck), on nothing but the ES library. */
const BARE = { lib: ["ES2022"], skipLibCheck: false }
/** effect's declarations name the DOM's fetch types; their own checking is effect's business. */
const WITH_EFFECT = { lib: ["ES2022", "DOM"], skipLibCheck: true }

/**
 * node16: the ES module (import condition, .d.ts) and the CommonJS module (require condition,
 * .d.cts); bundler: as a bundler resolves; /effect: an Effect program under bundler resolution.
 */
export const TSCONFIGS = {
  "tsconfig.node16.json": tsconfig("node16", "node16", ["consumer.mts", "consumer.cts"], BARE),
  "tsconfig.bundler.json": tsconfig("esnext", "bundler", ["consumer.ts"], BARE),
  "tsconfig.effect.json": tsconfig("esnext", "bundler", ["effect-consumer.ts"], WITH_EFFECT)
}
