import { Effect } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CheckoutError, createCheckoutClient } from "../../sdk/src/index.ts"
import { verifyWebhookSignature } from "../../src/webhooks/Signature.ts"
import { WebhookDispatcher } from "../../src/webhooks/WebhookDispatcher.ts"
import { publicRequest, startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import { stablecoinOption, testKeyOf, withKey } from "../support/TestMode.ts"
import { newPath } from "../support/WebhookHarness.ts"
import { startWebhookReceiver, type WebhookReceiver } from "../support/WebhookReceiver.ts"
import type { JsonBody } from "../support/Json.ts"

// Test mode (issue #55): test keys, test invoices never mixed with live ones, the test helpers and
// webhooks per mode, over real HTTP on loopback (PGlite, or DATABASE_URL when set).

let app: TestApp
let receiver: WebhookReceiver

beforeAll(async () => {
  receiver = await startWebhookReceiver()
  app = await startTestApp({ role: "api", webhookAllowLoopback: true })
}, 120_000)
afterAll(async () => {
  await app?.close()
  await receiver?.close()
})

const keyRoute = (merchant: TestMerchant) => `/api/users/${merchant.merchantId}/checkout-api-key`

describe("test keys", () => {
  it("start svc_test_, show their mode in the list, and have a limit of 3 of their own", async () => {
    const merchant = await app.createMerchant()
    const test = await merchant.dashboard(keyRoute(merchant), { body: { mode: "test" } })
    expect(test.status).toBe(201)
    expect(test.body).toMatchObject({ mode: "test", label: "" })
    expect(test.body.rawKey).toMatch(/^svc_test_/)
    expect(test.body.keyPrefix).toBe(test.body.rawKey.slice(0, 12))
    const live = await merchant.dashboard(keyRoute(merchant), { method: "POST" })
    expect(live.body.rawKey).toMatch(/^svc_live_/)
    expect(live.body.mode).toBe("live")
    // the merchant's first key (live) + this one = 2 live; 1 test
    for (let index = 0; index < 2; index++) expect((await merchant.dashboard(keyRoute(merchant), { body: { mode: "test" } })).status).toBe(201)
    const fourthTest = await merchant.dashboard(keyRoute(merchant), { body: { mode: "test" } })
    expect(fourthTest).toMatchObject({ status: 409, body: { error: "At most 3 active test API keys" } })
    expect((await merchant.dashboard(keyRoute(merchant), { body: { mode: "live" } })).status).toBe(201)
    expect(await merchant.dashboard(keyRoute(merchant), { body: { mode: "live" } })).toMatchObject({ status: 409, body: { error: "At most 3 active API keys" } })
    const list = await merchant.dashboard(`/api/users/${merchant.merchantId}/checkout-api-keys`)
    expect(list.body.keys.map((key: { mode: string }) => key.mode).sort()).toEqual(["live", "live", "live", "test", "test", "test"])
    expect(await merchant.dashboard(keyRoute(merchant), { body: { mode: "sandbox" } })).toMatchObject({ status: 400, body: { error: "mode must be one of live, test" } })
  })

  it("reach the merchant endpoints and not the dashboard", async () => {
    const merchant = await app.createMerchant()
    const { api } = await testKeyOf(app, merchant)
    expect((await api("/api/checkout/invoices", { body: { amountUsd: 5 } })).status).toBe(201)
    expect((await api("/api/dashboard/invoices")).status).toBe(403)
    expect((await api(`/api/users/${merchant.merchantId}/checkout-api-keys`)).status).toBe(403)
    expect((await api("/api/dashboard/webhook-settings?livemode=false")).status).toBe(403)
  })
})

describe("every route of the OpenAPI document", () => {
  // "A test key reaches the same five merchant endpoints as a live key, plus the test helpers, and
  // nothing else": every route that wants a credential (401 without one) refuses a test key but
  // those; a live key reaches the five and gets the helpers' own 403.
  const MERCHANT = ["POST /api/checkout/invoices", "GET /api/checkout/invoices/{id}", "GET /api/checkout/invoices/{id}/status", "POST /api/checkout/invoices/{id}/void",
    "POST /api/checkout/invoices/{id}/record-payment"]
  const HELPERS = ["pay", "confirm", "reorg", "expire"].map((action) => `POST /api/checkout/test-helpers/invoices/{id}/${action}`)

  it("documents test mode: the keys' mode, livemode on every answer carrying an invoice and on every webhook body, the helpers", async () => {
    type Schema = { required?: Array<string>; properties?: Record<string, JsonBody>; anyOf?: Array<Schema>; items?: Schema }
    const document = await (await fetch(`${app.baseUrl}/api/openapi.json`)).json() as {
      paths: Record<string, Record<string, JsonBody>>
      components: { schemas: Record<string, Schema> }
      webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: { $ref: string } }> } } }>
    }
    const json = (operation: JsonBody, status: string) => operation.responses[status].content["application/json"].schema as Schema
    const keyBody = document.paths["/api/users/{id}/checkout-api-key"].post.requestBody.content["application/json"].schema as Schema
    expect(keyBody.anyOf![0].properties!.mode.enum).toEqual(["live", "test"])
    expect(json(document.paths["/api/users/{id}/checkout-api-key"].post, "201").required).toContain("mode")
    expect(json(document.paths["/api/users/{id}/checkout-api-keys"].get, "200").properties!.keys.items.required).toContain("mode")
    expect(json(document.paths["/api/dashboard/invoices"].get, "200").properties!.invoices.items.required).toContain("livemode")
    for (const name of ["Invoice", "InvoiceStatus", "PublicInvoice", "PublicInvoiceStatus", "WebhookInvoice", "WebhookDelivery", "CheckoutSettings"]) {
      expect(document.components.schemas[name].required, name).toContain("livemode")
    }
    for (const [event, entry] of Object.entries(document.webhooks)) {
      const ref = entry.post.requestBody.content["application/json"].schema.$ref.split("/").at(-1)!
      expect(document.components.schemas[ref].required, event).toContain("livemode")
    }
    for (const action of ["pay", "confirm", "reorg", "expire"]) {
      const operation = document.paths[`/api/checkout/test-helpers/invoices/{id}/${action}`].post
      expect(operation.description, action).toContain("Test helpers need a test API key")
      expect(Object.keys(operation.responses), action).toContain("403")
    }
  })

  it("answers a test key on the five merchant endpoints and the test helpers only, a live key on the five only", async () => {
    const merchant = await app.createMerchant()
    const { rawKey } = await testKeyOf(app, merchant)
    const document = await (await fetch(`${app.baseUrl}/api/openapi.json`)).json() as { paths: Record<string, Record<string, unknown>> }
    const routes = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).filter((method) => ["get", "post", "put", "delete"].includes(method)).map((method) => `${method.toUpperCase()} ${path}`)
    )
    expect(routes).toEqual(expect.arrayContaining([...MERCHANT, ...HELPERS]))
    const call = async (route: string, headers: Record<string, string>) => {
      const [method, template] = route.split(" ")
      const path = template.replace("{id}", template.startsWith("/api/users/") ? merchant.merchantId : crypto.randomUUID()).replace("{keyId}", crypto.randomUUID())
      const response = await fetch(`${app.baseUrl}${path}`, {
        method,
        headers: { ...headers, ...(method === "GET" ? {} : { "content-type": "application/json" }) },
        body: method === "GET" ? undefined : "{}"
      })
      await response.body?.cancel()
      return response.status
    }
    const reached: Record<string, Array<string>> = { test: [], live: [] }
    for (const route of routes) {
      if (await call(route, {}) !== 401) continue
      for (const [mode, key] of [["test", rawKey], ["live", merchant.apiKey]] as const) {
        const status = await call(route, { "x-api-key": key })
        // 403, or 401 where only a session is taken (logout): not reached.
        if (status !== 401 && status !== 403) reached[mode].push(route)
      }
    }
    expect(reached.test.sort()).toEqual([...MERCHANT, ...HELPERS].sort())
    expect(reached.live.sort()).toEqual([...MERCHANT].sort())
  })
})

describe("test invoices", () => {
  it("carry livemode in every answer and are 404 to the other mode's key", async () => {
    const merchant = await app.createMerchant()
    const { api: testApi } = await testKeyOf(app, merchant)
    const test = await testApi("/api/checkout/invoices", { body: { amountUsd: 7 } })
    expect(test.status).toBe(201)
    expect(test.body.livemode).toBe(false)
    const live = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 7 } })
    expect(live.body.livemode).toBe(true)
    for (const suffix of ["", "/status"]) {
      expect((await testApi(`/api/checkout/invoices/${test.body.id}${suffix}`)).body.livemode).toBe(false)
      expect((await merchant.api(`/api/checkout/invoices/${live.body.id}${suffix}`)).body.livemode).toBe(true)
      expect(await merchant.api(`/api/checkout/invoices/${test.body.id}${suffix}`)).toMatchObject({ status: 404, body: { error: "Invoice not found" } })
      expect(await testApi(`/api/checkout/invoices/${live.body.id}${suffix}`)).toMatchObject({ status: 404, body: { error: "Invoice not found" } })
      expect(await (await fetch(`${app.baseUrl}/api/checkout/pay/${test.body.id}${suffix}`)).json()).toMatchObject({ livemode: false })
      expect(await (await fetch(`${app.baseUrl}/api/checkout/pay/${live.body.id}${suffix}`)).json()).toMatchObject({ livemode: true })
    }
    expect((await merchant.api(`/api/checkout/invoices/${test.body.id}/void`, { body: {} })).status).toBe(404)
    expect((await testApi(`/api/checkout/invoices/${live.body.id}/void`, { body: {} })).status).toBe(404)
    expect((await merchant.api(`/api/checkout/invoices/${test.body.id}/record-payment`, { body: { note: "x" } })).status).toBe(404)
    expect((await testApi(`/api/checkout/invoices/${live.body.id}/record-payment`, { body: { note: "x" } })).status).toBe(404)
    const voided = await testApi(`/api/checkout/invoices/${test.body.id}/void`, { body: {} })
    expect(voided.body).toMatchObject({ status: "voided", livemode: false })
  })

  it("keep an Idempotency-Key's answers apart per mode", async () => {
    const merchant = await app.createMerchant()
    const { rawKey } = await testKeyOf(app, merchant)
    const post = (apiKey: string) =>
      fetch(`${app.baseUrl}/api/checkout/invoices`, {
        method: "POST",
        headers: { "x-api-key": apiKey, "content-type": "application/json", "idempotency-key": "order-1" },
        body: JSON.stringify({ amountUsd: 3 })
      }).then((response) => response.json())
    const live = await post(merchant.apiKey)
    const test = await post(rawKey)
    expect(test.id).not.toBe(live.id)
    expect([live.livemode, test.livemode]).toEqual([true, false])
    expect((await post(rawKey)).id).toBe(test.id)
  })
})

describe("test helpers", () => {
  it("take a test invoice through pay, confirm, reorg and expire", async () => {
    const merchant = await app.createMerchant()
    const { api } = await testKeyOf(app, merchant)
    const invoice = (await api("/api/checkout/invoices", { body: { amountUsd: 10 } })).body
    const option = stablecoinOption(invoice)
    const half = { paymentOptionId: option.paymentOptionId, amount: String(Number(option.amount) / 2), transactionHash: "test_1" }
    const partial = await api(`/api/checkout/test-helpers/invoices/${invoice.id}/pay`, { body: half })
    expect(partial.status).toBe(200)
    expect(partial.body.invoice).toMatchObject({ status: "partially_paid", livemode: false })
    expect(partial.body.payment).toMatchObject({ transactionHash: "test_1", confirmations: 0 })
    const rest = await api(`/api/checkout/test-helpers/invoices/${invoice.id}/pay`, { body: { ...half, transactionHash: "test_2", confirmations: 0 } })
    expect(rest.body.invoice.status).toBe("payment_detected")
    const reorged = await api(`/api/checkout/test-helpers/invoices/${invoice.id}/reorg`, { body: { transactionHash: "test_2" } })
    expect(reorged.body.invoice.status).toBe("partially_paid")
    expect(reorged.body.payment).toMatchObject({ invalidationReason: "chain_reorganization" })
    const again = await api(`/api/checkout/test-helpers/invoices/${invoice.id}/pay`, { body: { ...half, transactionHash: "test_3" } })
    expect(again.body.invoice.status).toBe("payment_detected")
    for (const hash of ["test_1", "test_3"]) {
      expect((await api(`/api/checkout/test-helpers/invoices/${invoice.id}/confirm`, { body: { transactionHash: hash, confirmations: 1000 } })).status).toBe(200)
    }
    expect((await api(`/api/checkout/invoices/${invoice.id}`)).body.status).toBe("confirmed")

    const unpaid = (await api("/api/checkout/invoices", { body: { amountUsd: 4 } })).body
    const expired = await api(`/api/checkout/test-helpers/invoices/${unpaid.id}/expire`, { body: {} })
    expect(expired.body).toMatchObject({ id: unpaid.id, status: "expired", livemode: false })
    expect((await api(`/api/checkout/test-helpers/invoices/${unpaid.id}/expire`, { method: "POST" })).body.status).toBe("expired")
  })

  it("answer 403 to a live key and a session, 404 to a test key on a live invoice, and the spec's 400s to bad bodies", async () => {
    const merchant = await app.createMerchant()
    const { api } = await testKeyOf(app, merchant)
    const test = (await api("/api/checkout/invoices", { body: { amountUsd: 2 } })).body
    const live = (await merchant.api("/api/checkout/invoices", { body: { amountUsd: 2 } })).body
    const payBody = stablecoinOption(test)
    const helper = (id: string, action: string) => `/api/checkout/test-helpers/invoices/${id}/${action}`
    const needsTestKey = { status: 403, body: { error: "Test helpers need a test API key" } }
    const validBodies = { pay: payBody, confirm: { transactionHash: "t", confirmations: 1 }, reorg: { transactionHash: "t" }, expire: {} }
    for (const [action, body] of Object.entries(validBodies)) {
      expect(await merchant.api(helper(test.id, action), { body }), action).toMatchObject(needsTestKey)
      expect(await merchant.dashboard(helper(test.id, action), { body }), action).toMatchObject(needsTestKey)
      expect(await merchant.api(helper(live.id, action), { body }), action).toMatchObject(needsTestKey)
    }
    // The dashboard's own session, by its cookie (with the CSRF header), is no test key either.
    const cookieSession = { cookie: `checkout_session=${merchant.sessionToken}`, "x-csrf-token": merchant.csrfToken, "content-type": "application/json" }
    expect(await publicRequest(app.baseUrl, helper(test.id, "expire"), { method: "POST", headers: cookieSession, body: "{}" })).toMatchObject(needsTestKey)
    // Refused before the body is read: a bad body from a live key or a session is 403 too, never 400.
    for (const action of ["pay", "confirm", "reorg", "expire"]) {
      expect(await merchant.api(helper(test.id, action), { body: { nonsense: true } }), action).toMatchObject(needsTestKey)
      expect(await merchant.dashboard(helper(test.id, action), { body: { nonsense: true } }), action).toMatchObject(needsTestKey)
    }
    expect(await api(helper(live.id, "pay"), { body: stablecoinOption(live) })).toMatchObject({ status: 404, body: { error: "Invoice not found" } })
    expect(await api(helper(live.id, "expire"), { body: {} })).toMatchObject({ status: 404, body: { error: "Invoice not found" } })
    expect((await merchant.api(`/api/checkout/invoices/${live.id}`)).body.status).toBe("awaiting_payment")
    const bad: Array<[string, unknown, string]> = [
      ["pay", { amount: "1" }, "paymentOptionId is required"],
      ["pay", { ...payBody, amount: "1e3" }, "amount must be a decimal string such as \"12.5\" (at most 40 digits before and after the point)"],
      ["pay", { ...payBody, confirmations: -1 }, "confirmations must be at least 0"],
      ["pay", { ...payBody, late: true }, "late is not a known field"],
      ["pay", { ...payBody, amount: "0.0000001" }, "amount must be a positive amount with at most 6 decimals"],
      ["pay", { ...payBody, transactionHash: `0x${"ab".repeat(32)}` },
        "transactionHash must not be a real chain transaction hash: a test payment never claims a chain transaction (use other text, such as test_1)"],
      ["confirm", { transactionHash: "t" }, "confirmations is required"],
      ["reorg", {}, "transactionHash is required"],
      ["expire", { now: true }, "now is not a known field"]
    ]
    for (const [action, body, error] of bad) {
      expect(await api(helper(test.id, action), { body }), `${action} ${JSON.stringify(body)}`).toMatchObject({ status: 400, body: { error } })
    }
    expect(await api(helper(test.id, "pay"), { body: { ...payBody, paymentOptionId: "nope" } })).toMatchObject({
      status: 404,
      body: { error: "paymentOptionId is not an option of this invoice" }
    })
    expect(await api(helper(test.id, "confirm"), { body: { transactionHash: "unknown", confirmations: 1 } })).toMatchObject({
      status: 404,
      body: { error: "No payment of this invoice has that transactionHash" }
    })
  })
})

describe("the SDK's test helpers", () => {
  it("client.testHelpers.invoices.pay, confirm, reorg and expire drive a test invoice; a live key is refused", async () => {
    const merchant = await app.createMerchant()
    const { rawKey } = await testKeyOf(app, merchant)
    const client = createCheckoutClient({ baseUrl: app.baseUrl, apiKey: rawKey, maxRetries: 0 })
    const invoice = await client.invoices.create({ amountUsd: 6 })
    expect(invoice.livemode).toBe(false)
    const paid = await client.testHelpers.invoices.pay(invoice.id, { ...stablecoinOption(invoice), transactionHash: "test_sdk" })
    expect(paid.invoice.status).toBe("payment_detected")
    expect((await client.testHelpers.invoices.confirm(invoice.id, { transactionHash: "test_sdk", confirmations: 1000 })).invoice.status).toBe("confirmed")
    expect((await client.testHelpers.invoices.reorg(invoice.id, { transactionHash: "test_sdk" })).payment.invalidationReason).toBe("chain_reorganization")
    const other = await client.invoices.create({ amountUsd: 6 })
    expect((await client.testHelpers.invoices.expire(other.id)).status).toBe("expired")
    const live = createCheckoutClient({ baseUrl: app.baseUrl, apiKey: merchant.apiKey, maxRetries: 0 })
    const refused = await live.testHelpers.invoices.expire(other.id).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(CheckoutError)
    expect(refused).toMatchObject({ status: 403, error: "Test helpers need a test API key" })
  })
})

describe("webhooks per mode", () => {
  const configure = async (merchant: TestMerchant, url: string, query: string) => {
    expect((await merchant.dashboard(`/api/dashboard/webhook-settings${query}`, { method: "PUT", body: { url } })).status).toBe(200)
    const secret = await merchant.dashboard(`/api/dashboard/webhook-settings/secret${query}`, { method: "POST" })
    expect(secret.status).toBe(201)
    return secret.body.secret as string
  }

  it("send a test event only to the test URL, signed with the test secret, and a live one never there", async () => {
    const merchant = await app.createMerchant()
    const [livePath, testPath] = [newPath(), newPath()]
    for (const path of [livePath, testPath]) receiver.on(path, (response) => response.writeHead(200).end())
    const liveSecret = await configure(merchant, receiver.url(livePath), "")
    const testSecret = await configure(merchant, receiver.url(testPath), "?livemode=false")
    expect(testSecret).not.toBe(liveSecret)
    expect((await merchant.dashboard("/api/dashboard/webhook-settings")).body.url).toBe(receiver.url(livePath))
    expect((await merchant.dashboard("/api/dashboard/webhook-settings?livemode=false")).body.url).toBe(receiver.url(testPath))
    expect(await merchant.dashboard("/api/dashboard/webhook-settings?livemode=maybe")).toMatchObject({ status: 400, body: { error: "livemode must be true or false" } })

    const { api } = await testKeyOf(app, merchant)
    const test = (await api("/api/checkout/invoices", { body: { amountUsd: 3 } })).body
    const live = (await merchant.api("/api/checkout/invoices", { body: { amountUsd: 3 } })).body
    await app.run(Effect.flatMap(WebhookDispatcher, (dispatcher) => dispatcher.runOnce))

    const atTest = receiver.received(testPath)
    const atLive = receiver.received(livePath)
    expect(atTest.map((request) => JSON.parse(request.body).invoice.id)).toEqual([test.id])
    expect(atLive.map((request) => JSON.parse(request.body).invoice.id)).toEqual([live.id])
    expect(JSON.parse(atTest[0].body)).toMatchObject({ event: "invoice_created", livemode: false, invoice: { livemode: false } })
    expect(JSON.parse(atLive[0].body)).toMatchObject({ event: "invoice_created", livemode: true, invoice: { livemode: true } })
    expect(verifyWebhookSignature(atTest[0].body, String(atTest[0].headers["x-checkout-signature"]), testSecret)).toBe(true)
    expect(verifyWebhookSignature(atTest[0].body, String(atTest[0].headers["x-checkout-signature"]), liveSecret)).toBe(false)
    expect(verifyWebhookSignature(atLive[0].body, String(atLive[0].headers["x-checkout-signature"]), liveSecret)).toBe(true)

    const liveLog = (await merchant.dashboard("/api/dashboard/webhook-deliveries")).body.deliveries
    const testLog = (await merchant.dashboard("/api/dashboard/webhook-deliveries?livemode=false")).body.deliveries
    expect(liveLog.map((delivery: { invoiceId: string; livemode: boolean }) => [delivery.invoiceId, delivery.livemode])).toEqual([[live.id, true]])
    expect(testLog.map((delivery: { invoiceId: string; livemode: boolean }) => [delivery.invoiceId, delivery.livemode])).toEqual([[test.id, false]])

    const sent = await merchant.dashboard("/api/dashboard/webhook-settings/test?livemode=false", { method: "POST" })
    expect(sent.body.ok).toBe(true)
    const probe = receiver.received(testPath).at(-1)!
    expect(JSON.parse(probe.body)).toEqual({ event: "webhook_test", livemode: false, invoice: null })
    expect(verifyWebhookSignature(probe.body, String(probe.headers["x-checkout-signature"]), testSecret)).toBe(true)
  })

  it("send a test invoice's events nowhere while only live settings exist", async () => {
    const merchant = await app.createMerchant()
    const livePath = newPath()
    receiver.on(livePath, (response) => response.writeHead(200).end())
    await configure(merchant, receiver.url(livePath), "")
    const { api } = await testKeyOf(app, merchant)
    await api("/api/checkout/invoices", { body: { amountUsd: 3 } })
    await app.run(Effect.flatMap(WebhookDispatcher, (dispatcher) => dispatcher.runOnce))
    expect(receiver.received(livePath)).toEqual([])
    expect((await merchant.dashboard("/api/dashboard/webhook-settings?livemode=false")).body).toEqual({ url: null, enabledEvents: expect.any(Array), hasSecret: false })
  })
})

describe("the rate limit per mode", () => {
  it("counts test keys in a window of their own", async () => {
    const limited = await startTestApp({ role: "api", apiRateLimitPerMinute: 3 })
    try {
      const merchant = await limited.createMerchant()
      const { api } = await testKeyOf(limited, merchant)
      for (let index = 0; index < 3; index++) expect((await merchant.api("/api/checkout/invoices/00000000-0000-4000-8000-000000000000")).status).toBe(404)
      expect((await merchant.api("/api/checkout/invoices/00000000-0000-4000-8000-000000000000")).status).toBe(429)
      for (let index = 0; index < 3; index++) expect((await api("/api/checkout/invoices/00000000-0000-4000-8000-000000000000")).status).toBe(404)
      expect((await api("/api/checkout/invoices/00000000-0000-4000-8000-000000000000")).status).toBe(429)
    } finally {
      await limited.close()
    }
  }, 120_000)
})

describe("a property over live and test commands", () => {
  type Command =
    | { readonly kind: "create"; readonly mode: "live" | "test" }
    | { readonly kind: "read"; readonly mode: "live" | "test"; readonly pick: number; readonly suffix: "" | "/status" }
    | { readonly kind: "void"; readonly mode: "live" | "test"; readonly pick: number }
    | { readonly kind: "pay"; readonly pick: number }
  const mode = fc.constantFrom("live" as const, "test" as const)
  const command: fc.Arbitrary<Command> = fc.oneof(
    fc.record({ kind: fc.constant("create" as const), mode }),
    fc.record({ kind: fc.constant("read" as const), mode, pick: fc.nat(20), suffix: fc.constantFrom("" as const, "/status" as const) }),
    fc.record({ kind: fc.constant("void" as const), mode, pick: fc.nat(20) }),
    fc.record({ kind: fc.constant("pay" as const), pick: fc.nat(20) })
  )

  it("no live answer ever carries a test object, nor a test answer a live one", async () => {
    const merchant = await app.createMerchant()
    const { rawKey } = await testKeyOf(app, merchant)
    const clients = { live: withKey(app, merchant.apiKey), test: withKey(app, rawKey) }
    const created: Array<{ id: string; livemode: boolean; invoice: JsonBody }> = []
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 8 }), async (commands) => {
        for (const step of commands) {
          const target = created.length === 0 || step.kind === "create" ? undefined : created[step.pick % created.length]
          const client = step.kind === "pay" ? clients.test : clients[step.mode]
          const answer = step.kind === "create"
            ? await client("/api/checkout/invoices", { body: { amountUsd: 1 } })
            : target === undefined
            ? undefined
            : step.kind === "read"
            ? await client(`/api/checkout/invoices/${target.id}${step.suffix}`)
            : step.kind === "void"
            ? await client(`/api/checkout/invoices/${target.id}/void`, { body: {} })
            : await client(`/api/checkout/test-helpers/invoices/${target.id}/pay`, { body: { ...stablecoinOption(target.invoice), amount: "0.5" } })
          if (answer === undefined) continue
          const livemode = step.kind === "pay" ? false : step.mode === "live"
          if (step.kind === "create") created.push({ id: answer.body.id, livemode, invoice: answer.body })
          const ownMode = target === undefined || target.livemode === livemode
          if (!ownMode) {
            expect(answer.status).toBe(404)
            expect(JSON.stringify(answer.body)).not.toContain(target.id)
          } else if (answer.status < 300) {
            const invoice = step.kind === "pay" ? answer.body.invoice : answer.body
            expect(invoice.livemode).toBe(livemode)
          }
        }
      }),
      { numRuns: 12 }
    )
  }, 120_000)
})
