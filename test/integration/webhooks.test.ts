import { Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { verifyWebhookSignature } from "../../src/webhooks/Signature.ts"
import { LEASE_MS } from "../../src/webhooks/DeliveryClaims.ts"
import { WEBHOOK_TIMEOUT_MS } from "../../src/webhooks/WebhookConnector.ts"
import { startTestApp, type TestApp } from "../support/TestApp.ts"
import { gapsBetween, newPath, RECEIPTS_ON_SCHEDULE, SCHEDULE, webhookHarness } from "../support/WebhookHarness.ts"
import { recordingConnector, scriptedResolver, startWebhookReceiver, type WebhookReceiver } from "../support/WebhookReceiver.ts"

let app: TestApp
let plain: WebhookReceiver
let secure: WebhookReceiver
let harness: ReturnType<typeof webhookHarness>

beforeAll(async () => {
  plain = await startWebhookReceiver()
  secure = await startWebhookReceiver({ tls: true })
  // API-only: no background workers; the tests drive dispatchers (and their clock) themselves.
  app = await startTestApp({ role: "api", webhookAllowLoopback: true })
  harness = webhookHarness(app)
})
afterEach(() => harness.parkDeliveries())
afterAll(async () => {
  await app?.close()
  await plain?.close()
  await secure?.close()
})

const INVOICE_FIELDS = [
  "id",
  "amountUsd",
  "status",
  "paymentCoverage",
  "receivedAmountUsd",
  "confirmedAmountUsd",
  "confirmations",
  "paymentDetectedAt",
  "confirmedAt",
  "paidOutOfBandAt",
  "paidOutOfBandNote",
  "defaultPaymentOptionId",
  "lastPaymentOptionId",
  "paymentSummary",
  "lastTransactionHash",
  "exceptionType",
  "exceptionStatus",
  "exceptionAction",
  "exceptionNote",
  "exceptionClosedAt",
  "metadata",
  "livemode"
].sort()

describe("webhook settings", () => {
  it("check the URL at save time, keep the secret encrypted and never return it", async () => {
    const merchant = await harness.newMerchant()
    const put = (body: unknown) => merchant.dashboard("/api/dashboard/webhook-settings", { method: "PUT", body })
    expect(await put({ url: "http://hooks.example.com/x" })).toMatchObject({ status: 400 })
    expect(await put({ url: "https://u:p@hooks.example.com/x" })).toMatchObject({ status: 400, body: { error: "url must not contain credentials" } })
    expect(await put({ url: "https://hooks.example.com/x#f" })).toMatchObject({ status: 400, body: { error: "url must not contain a fragment" } })
    const forbiddenLiterals = [
      "https://10.0.0.1/x",
      "https://167772161/x",
      "https://012.0.0.1/x",
      "https://0xa9.0xfe.0xa9.0xfe/x",
      "https://[::ffff:169.254.169.254]/x",
      "https://[fd00::1]/x",
      "https://0.0.0.0/x",
      "https://[::]/x"
    ]
    for (const url of forbiddenLiterals) {
      expect(await put({ url }), url).toMatchObject({ status: 400, body: { error: "url must not point to a private or reserved address" } })
    }
    expect(await put({ url: "https://hooks.example.com/x", enabledEvents: ["invoice_paid"] })).toMatchObject({ status: 400 })
    expect(await put({ enabledEvents: ["invoice_created"] })).toMatchObject({ status: 400, body: { error: "url is required" } })

    const saved = await put({ url: "https://hooks.example.com/x", enabledEvents: ["invoice_voided", "invoice_confirmed", "invoice_voided"] })
    expect(saved).toMatchObject({ status: 200, body: { url: "https://hooks.example.com/x", enabledEvents: ["invoice_confirmed", "invoice_voided"], hasSecret: false } })
    const first = await merchant.dashboard("/api/dashboard/webhook-settings/secret", { method: "POST" })
    const second = await merchant.dashboard("/api/dashboard/webhook-settings/secret", { method: "POST" })
    expect(first.body.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
    expect(second.body.secret).not.toBe(first.body.secret)
    const current = await merchant.dashboard("/api/dashboard/webhook-settings")
    expect(current.body).toEqual({ url: "https://hooks.example.com/x", enabledEvents: ["invoice_confirmed", "invoice_voided"], hasSecret: true })
    expect(JSON.stringify(current.body)).not.toContain(second.body.secret)

    const stored = await app.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ secretCiphertext: string }>`SELECT secret_ciphertext FROM webhook_settings WHERE merchant_id = ${merchant.merchantId}`
    }))
    expect(stored[0].secretCiphertext).toMatch(/^v1:/)
    expect(stored[0].secretCiphertext).not.toContain(second.body.secret.slice(6))

    expect(await put({ url: null })).toMatchObject({ status: 200, body: { url: null, hasSecret: true } })
    expect((await merchant.api("/api/dashboard/webhook-settings")).status).toBe(403)
    expect((await merchant.api("/api/dashboard/webhook-settings/secret", { method: "POST" })).status).toBe(403)
  })

  it("round-trip: a PUT of what the GET answered is accepted; a changed hasSecret is refused as read-only", async () => {
    const merchant = await harness.newMerchant()
    const put = (body: unknown) => merchant.dashboard("/api/dashboard/webhook-settings", { method: "PUT", body })
    const fresh = await merchant.dashboard("/api/dashboard/webhook-settings")
    expect(await put(fresh.body)).toMatchObject({ status: 200, body: fresh.body })
    await put({ url: "https://hooks.example.com/round", enabledEvents: ["invoice_confirmed"] })
    await merchant.dashboard("/api/dashboard/webhook-settings/secret", { method: "POST" })
    const read = await merchant.dashboard("/api/dashboard/webhook-settings")
    expect(read.body.hasSecret).toBe(true)
    expect(await put(read.body)).toMatchObject({ status: 200, body: read.body })
    expect(await put({ ...read.body, hasSecret: false })).toMatchObject({
      status: 400,
      body: { error: "hasSecret is read-only and cannot be changed here: POST /api/dashboard/webhook-settings/secret creates or rotates the secret" }
    })
    expect(await put({ ...read.body, hasSecret: "yes" })).toMatchObject({ status: 400 })
  })

  it("refuses URLs with control characters, raw or percent-encoded, in the host or anywhere", async () => {
    const merchant = await harness.newMerchant()
    const put = (body: unknown) => merchant.dashboard("/api/dashboard/webhook-settings", { method: "PUT", body })
    const message = "url must not contain spaces or control characters (CR, LF, TAB, NUL, U+202E, ...), raw or percent-encoded (a space as %20)"
    const hostile = [
      "https://hooks.exa\rmple.com/x",
      "https://hooks.example.com/x\r\nX-Injected: 1",
      "https://hooks.example.com/\tx",
      "https://hooks.exa%0dmple.com/x",
      "https://hooks.example.com/x%0D%0AX-Injected:%201",
      "https://hooks.example.com/x?a=%09",
      "https://hooks.example.com/%00",
      "https://hooks.example%00.com/x",
      "https://hooks.example.com/x\u007f",
      // A right-to-left override shows another URL than the one contacted; a raw space is no part of a URL (#52).
      "https://hooks.example.com/\u202Egpj.exe",
      "https://hooks.example.com/%E2%80%AEgpj.exe",
      "https://hooks.example.com/a b",
      " https://hooks.example.com/x",
      "https://hooks.example.com/x\u00a0",
      "https://hooks.example.com/x\u0085"
    ]
    for (const url of hostile) {
      expect(await put({ url }), JSON.stringify(url)).toMatchObject({ status: 400, body: { error: message } })
    }
    expect((await merchant.dashboard("/api/dashboard/webhook-settings")).body.url).toBeNull()
    expect(await put({ url: "https://hooks.example.com/x%20y" })).toMatchObject({ status: 200 })
  })
})

describe("delivery", () => {
  it("posts a signed {event, invoice} with the spec's fields and headers, the invoice as it is at send time", async () => {
    const merchant = await harness.newMerchant()
    const path = newPath()
    plain.on(path, (response) => response.writeHead(200, { "content-type": "text/plain" }).end("thanks"))
    const secret = await harness.configure(merchant, plain.url(path))
    const invoice = await harness.createInvoice(merchant, { amountUsd: 12, metadata: { order_id: "o-1" } })
    expect((await merchant.api(`/api/checkout/invoices/${invoice.id}/void`, { body: {} })).status).toBe(200)
    await harness.runOnce()

    const received = plain.received(path)
    expect(received.map((request) => request.headers["x-checkout-event"]).sort()).toEqual(["invoice_created", "invoice_voided"])
    for (const request of received) {
      expect(request.method).toBe("POST")
      expect(verifyWebhookSignature(request.body, request.headers["x-checkout-signature"] as string, secret)).toBe(true)
      expect(request.headers["content-type"]).toBe("application/json")
      expect(request.headers["user-agent"]).toMatch(/^checkout-webhooks\//)
      const payload = JSON.parse(request.body)
      expect(Object.keys(payload).sort()).toEqual(["event", "invoice", "livemode"])
      expect(payload.livemode).toBe(true)
      expect(payload.event).toBe(request.headers["x-checkout-event"])
      expect(Object.keys(payload.invoice).sort()).toEqual(INVOICE_FIELDS)
      // Latest state at send time: the invoice was voided before the created event went out.
      expect(payload.invoice).toMatchObject({ id: invoice.id, amountUsd: 12, status: "voided", metadata: { order_id: "o-1" } })
    }

    const log = await harness.deliveriesOf(merchant)
    expect(log).toHaveLength(2)
    expect(new Set(log.map((delivery) => delivery.id))).toEqual(new Set(received.map((request) => request.headers["x-checkout-delivery"])))
    for (const delivery of log) {
      expect(delivery).toMatchObject({ invoiceId: invoice.id, url: plain.url(path), status: "delivered", attemptCount: 1, lastStatusCode: 200, nextAttemptAt: null })
      expect(delivery.attempts).toEqual([
        { attemptedAt: expect.any(String), url: plain.url(path), statusCode: 200, durationMs: expect.any(Number), error: null, responseExcerpt: "thanks", manual: false }
      ])
    }
  })

  it("skips switched-off events, and dispatches events of merchants without a URL with no delivery", async () => {
    const merchant = await harness.newMerchant()
    const path = newPath()
    plain.on(path, (response) => response.writeHead(204).end())
    await harness.configure(merchant, plain.url(path), ["invoice_voided"])
    const invoice = await harness.createInvoice(merchant)
    await merchant.api(`/api/checkout/invoices/${invoice.id}/void`, { body: {} })
    const silent = await harness.newMerchant()
    const unheard = await harness.createInvoice(silent)
    await harness.runOnce()

    expect(plain.received(path).map((request) => request.headers["x-checkout-event"])).toEqual(["invoice_voided"])
    expect(JSON.parse(plain.received(path)[0].body).invoice.status).toBe("voided")
    const outbox = await app.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ event: string; dispatchedAt: Date | null; deliveries: string }>`SELECT o.event, o.dispatched_at,
        (SELECT count(*) FROM webhook_deliveries d WHERE d.outbox_id = o.id) AS deliveries
        FROM outbox o WHERE o.invoice_id IN (${invoice.id}, ${unheard.id}) ORDER BY o.id`
    }))
    expect(outbox.map((row) => [row.event, row.dispatchedAt !== null, Number(row.deliveries)])).toEqual([
      ["invoice_created", true, 0],
      ["invoice_voided", true, 1],
      ["invoice_created", true, 0]
    ])
  })

  it("works off a backlog larger than one batch in one run", async () => {
    const merchant = await harness.newMerchant()
    const path = newPath()
    plain.on(path, (response) => response.writeHead(204).end())
    await harness.configure(merchant, plain.url(path))
    for (let index = 0; index < 20; index++) await harness.createInvoice(merchant)
    await harness.runOnce()
    expect(new Set(plain.received(path).map((request) => request.headers["x-checkout-delivery"])).size).toBe(20)
    expect((await harness.deliveriesOf(merchant, "?status=delivered")).length).toBe(20)
  })

  it("keeps sending other merchants' webhooks while one receiver hangs", async () => {
    const stuck = await harness.newMerchant()
    const stuckPath = newPath()
    plain.on(stuckPath, () => undefined)
    await harness.configure(stuck, plain.url(stuckPath))
    for (let index = 0; index < 4; index++) await harness.createInvoice(stuck)
    const other = await harness.newMerchant()
    const otherPath = newPath()
    plain.on(otherPath, (response) => response.writeHead(204).end())
    await harness.configure(other, plain.url(otherPath))
    for (let index = 0; index < 20; index++) await harness.createInvoice(other)

    const whileStuck = await harness.underTestClock(harness.withDispatcher({})((dispatcher) =>
      Effect.gen(function*() {
        const running = yield* Effect.forkChild(dispatcher.runOnce)
        // Real time: the hanging attempts end only when the test clock reaches their time-out.
        yield* Effect.promise(async () => {
          // Patience only (up to a minute on a loaded machine): the assertion is on what arrived, not when.
          const settled = () => plain.received(otherPath).length >= 20 && plain.received(stuckPath).length >= 4
          for (let turn = 0; turn < 6_000 && !settled(); turn++) await new Promise((resolve) => setTimeout(resolve, 10))
        })
        const seen = [plain.received(stuckPath).length, plain.received(otherPath).length]
        yield* TestClock.adjust(WEBHOOK_TIMEOUT_MS)
        yield* Fiber.join(running)
        return seen
      })
    ))
    expect(whileStuck).toEqual([4, 20])
    expect((await harness.deliveriesOf(other, "?status=delivered")).length).toBe(20)
    const timedOut = await harness.deliveriesOf(stuck)
    expect(timedOut.map((delivery) => [delivery.status, delivery.attemptCount, delivery.attempts[0].error])).toEqual(
      Array.from({ length: 4 }, () => ["pending", 1, `timed out after ${WEBHOOK_TIMEOUT_MS} ms`])
    )
  })

  it("counts an attempt that another instance recorded meanwhile instead of overwriting it", async () => {
    const merchant = await harness.newMerchant()
    const path = newPath()
    await harness.configure(merchant, plain.url(path))
    // While this attempt waits for its answer, another instance (which took the claim over after
    // its lease) records an attempt of the same delivery.
    plain.on(path, (response, request) => {
      void app.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE webhook_deliveries SET attempt_count = attempt_count + 1 WHERE id = ${String(request.headers["x-checkout-delivery"])}`
      })).then(() => response.writeHead(200).end())
    })
    await harness.createInvoice(merchant)
    await harness.runOnce()
    const [delivery] = await harness.deliveriesOf(merchant)
    expect(delivery).toMatchObject({ status: "delivered", attemptCount: 2, lastStatusCode: 200, nextAttemptAt: null })
    expect(delivery.attempts).toHaveLength(1)
  })

  it("keeps a delivery delivered by hand while its automatic attempt was failing", async () => {
    const merchant = await harness.newMerchant()
    const path = newPath()
    await harness.configure(merchant, plain.url(path))
    let requests = 0
    plain.on(path, (response, request) => {
      requests++
      if (requests === 1) {
        // The automatic attempt: before it is answered (500), the merchant redelivers by hand (200).
        void merchant.dashboard(`/api/dashboard/webhook-deliveries/${String(request.headers["x-checkout-delivery"])}/redeliver`, { method: "POST" })
          .then(() => response.writeHead(500).end())
      } else response.writeHead(200).end()
    })
    await harness.createInvoice(merchant)
    await harness.runOnce()
    const [delivery] = await harness.deliveriesOf(merchant)
    expect(delivery).toMatchObject({ status: "delivered", attemptCount: 1, nextAttemptAt: null })
    expect(delivery.attempts.map((attempt: { manual: boolean; statusCode: number }) => [attempt.manual, attempt.statusCode])).toEqual([[true, 200], [false, 500]])
  })

  it("signs with the current secret after a rotation", async () => {
    const merchant = await harness.newMerchant()
    const path = newPath()
    plain.on(path, (response) => response.writeHead(200).end())
    const old = await harness.configure(merchant, plain.url(path))
    const rotated = (await merchant.dashboard("/api/dashboard/webhook-settings/secret", { method: "POST" })).body.secret as string
    await harness.createInvoice(merchant)
    await harness.runOnce()
    const [request] = plain.received(path)
    expect(verifyWebhookSignature(request.body, request.headers["x-checkout-signature"] as string, rotated)).toBe(true)
    expect(verifyWebhookSignature(request.body, request.headers["x-checkout-signature"] as string, old)).toBe(false)
  })

  it("retries a 500 and a 302 after exactly 1, 5 and 15 minutes, then fails them for good", async () => {
    const receivers = { error: newPath(), redirect: newPath() }
    plain.on(receivers.error, (response) => response.writeHead(500).end("boom"))
    plain.on(receivers.redirect, (response) => response.writeHead(302, { location: "/moved" }).end())
    const merchants = { error: await harness.newMerchant(), redirect: await harness.newMerchant() }
    for (const kind of ["error", "redirect"] as const) {
      await harness.configure(merchants[kind], plain.url(receivers[kind]))
      await harness.createInvoice(merchants[kind])
    }

    const counts = await harness.stepThrough({}, SCHEDULE, () => [plain.received(receivers.error).length, plain.received(receivers.redirect).length])
    expect(counts).toEqual(RECEIPTS_ON_SCHEDULE.map((count) => [count, count]))
    expect(plain.received("/moved")).toHaveLength(0)

    const expected = {
      error: { statusCode: 500, error: "HTTP 500", responseExcerpt: "boom" },
      redirect: { statusCode: 302, error: "redirects are not followed", responseExcerpt: "" }
    }
    for (const kind of ["error", "redirect"] as const) {
      const [delivery] = await harness.deliveriesOf(merchants[kind])
      expect(delivery, kind).toMatchObject({ status: "failed", attemptCount: 4, lastStatusCode: expected[kind].statusCode, nextAttemptAt: null })
      expect(gapsBetween(delivery.attempts), kind).toEqual([60_000, 300_000, 900_000])
      for (const attempt of delivery.attempts) expect(attempt, kind).toMatchObject({ ...expected[kind], manual: false })
    }
  })

  it("sends each retry to the URL configured at attempt time and records it per attempt", async () => {
    const paths = { old: newPath(), moved: newPath() }
    plain.on(paths.old, (response) => response.writeHead(503).end("down"))
    plain.on(paths.moved, (response) => response.writeHead(200).end("ok"))
    const merchant = await harness.newMerchant()
    await harness.configure(merchant, plain.url(paths.old))
    await harness.createInvoice(merchant)
    const counts = await harness.stepThrough({}, ["30 seconds", "30 seconds"], () => [plain.received(paths.old).length, plain.received(paths.moved).length])
    expect(counts.at(-1)).toEqual([2, 0])

    const changed = await merchant.dashboard("/api/dashboard/webhook-settings", { method: "PUT", body: { url: plain.url(paths.moved) } })
    expect(changed.status).toBe(200)
    // A fresh clock starts at the real now again: the third attempt is due 1 + 5 minutes after it.
    await harness.stepThrough({}, ["6 minutes"], () => null)
    expect(plain.received(paths.old)).toHaveLength(2)
    expect(plain.received(paths.moved)).toHaveLength(1)
    const [delivery] = await harness.deliveriesOf(merchant)
    expect(delivery).toMatchObject({ status: "delivered", url: plain.url(paths.moved), attemptCount: 3 })
    expect(delivery.attempts.map((attempt: { url: string }) => attempt.url)).toEqual([plain.url(paths.old), plain.url(paths.old), plain.url(paths.moved)])
  })

  it("connects only to the address it checked, keeping the host name in Host and TLS SNI", async () => {
    const merchant = await harness.newMerchant()
    const path = newPath()
    secure.on(path, (response) => response.writeHead(200).end())
    await harness.configure(merchant, secure.url(path, "hooks.merchant.test"))
    await harness.createInvoice(merchant)
    const dns = scriptedResolver({ "hooks.merchant.test": [["127.0.0.1"]] })
    const network = recordingConnector()
    await harness.runOnce({ resolve: dns.resolve, connect: network.connect })

    const [request] = secure.received(path)
    expect(request.headers.host).toBe(`hooks.merchant.test:${secure.port}`)
    expect(request.servername).toBe("hooks.merchant.test")
    expect(network.dials).toEqual([{ hostname: "127.0.0.1", port: String(secure.port), servername: "hooks.merchant.test" }])
    expect((await harness.deliveriesOf(merchant))[0].status).toBe("delivered")
  })

  it("refuses a retry when the host rebinds from a public address to 127.0.0.1 (loopback not allowed)", async () => {
    const merchant = await harness.newMerchant()
    const path = newPath()
    secure.on(path, (response) => response.writeHead(503).end())
    await harness.configure(merchant, secure.url(path, "rebind.merchant.test"))
    await harness.createInvoice(merchant)
    const dns = scriptedResolver({ "rebind.merchant.test": [["93.184.216.34"], ["127.0.0.1"]] })
    // The "internet" of this test: the public address is served by the loopback receiver.
    const network = recordingConnector({ "93.184.216.34": "127.0.0.1" })

    const counts = await harness.stepThrough({ resolve: dns.resolve, connect: network.connect, allowLoopback: false }, SCHEDULE, () => secure.received(path).length)
    expect(counts).toEqual([1, 1, 1, 1, 1, 1, 1, 1])
    expect(dns.lookups).toHaveLength(4)
    expect(network.dials.map((dial) => dial.hostname)).toEqual(["93.184.216.34"])
    const [delivery] = await harness.deliveriesOf(merchant)
    expect(delivery).toMatchObject({ status: "failed", attemptCount: 4 })
    expect(delivery.attempts[0]).toMatchObject({ statusCode: 503, error: "HTTP 503" })
    for (const retry of delivery.attempts.slice(1)) {
      expect(retry).toMatchObject({ statusCode: null, error: "rebind.merchant.test resolves to a forbidden address (127.0.0.1)" })
    }
  })

  it("refuses every forbidden destination at send time, before connecting", async () => {
    const answers: Record<string, Array<string>> = {
      private: ["10.0.0.1"],
      mixed: ["93.184.216.34", "192.168.0.1"],
      mapped: ["::ffff:127.0.0.1"],
      nat64: ["64:ff9b::a9fe:a9fe"],
      metadata: ["169.254.169.254"],
      cgnat: ["100.64.0.1"],
      uniquelocal: ["fd00::1"],
      unspecified4: ["0.0.0.0"],
      unspecified6: ["::"],
      loopback6: ["::1"]
    }
    const dns = scriptedResolver(Object.fromEntries(Object.entries(answers).map(([name, addresses]) => [`${name}.merchant.test`, [addresses]])))
    // URLs that the save-time rules refuse, written around them, must be refused again at send time.
    const literals = [
      "http://127.0.0.1:1/x",
      "https://2130706433/x",
      "https://0177.0.0.1/x",
      "https://0x7f.0.0.1/x",
      "https://0.0.0.0/x",
      "https://[::]/x",
      "https://[::ffff:127.0.0.1]/x",
      "https://[64:ff9b::7f00:1]/x",
      "https://u:p@hooks.merchant.test/x",
      "https://hooks.merchant.test/x#fragment"
    ]
    const merchant = await harness.newMerchant()
    await harness.configure(merchant, "https://hooks.example.com/x")
    const urls = [...Object.keys(answers).map((name) => `https://${name}.merchant.test/x`), ...literals]
    const network = recordingConnector()
    for (const url of urls) {
      await app.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE webhook_settings SET url = ${url} WHERE merchant_id = ${merchant.merchantId}`
      }))
      await harness.createInvoice(merchant)
      await harness.runOnce({ resolve: dns.resolve, connect: network.connect, allowLoopback: false })
    }
    expect(network.dials).toEqual([])
    expect(new Set(dns.lookups)).toEqual(new Set(Object.keys(answers).map((name) => `${name}.merchant.test`)))

    const log = await harness.deliveriesOf(merchant)
    expect(log.map((delivery) => delivery.url).sort()).toEqual([...urls].sort())
    for (const delivery of log) {
      expect(delivery.attempts, delivery.url).toHaveLength(1)
      expect(delivery.attempts[0].statusCode, delivery.url).toBeNull()
      expect(delivery.attempts[0].error, delivery.url).toMatch(/forbidden address|must use https|private or reserved|credentials|fragment/)
    }
  })

  it("delivers again after a crash between sending and recording (at least once), and loses nothing", async () => {
    const merchant = await harness.newMerchant()
    const path = newPath()
    const secret = await harness.configure(merchant, plain.url(path))
    let abandoned = false
    const arrived = new Promise<void>((resolve) => {
      plain.on(path, (response) => {
        response.on("close", () => void (abandoned = !response.writableEnded))
        resolve()
      })
    })
    await harness.createInvoice(merchant)

    const counts = await harness.underTestClock(Effect.gen(function*() {
      // The first process takes the event, sends it, and dies before it records the answer.
      const sending = yield* harness.withDispatcher({})((dispatcher) => Effect.andThen(dispatcher.fanOut, dispatcher.sendDue)).pipe(Effect.forkChild)
      yield* Effect.promise(() => arrived)
      yield* Fiber.interrupt(sending)
      plain.on(path, (response) => response.writeHead(200).end())
      // A new process: the claim of the dead one holds until its lease runs out.
      return yield* harness.withDispatcher({})((restarted) =>
        Effect.gen(function*() {
          yield* restarted.runOnce
          const beforeLease = plain.received(path).length
          yield* TestClock.adjust(LEASE_MS - 1)
          yield* restarted.runOnce
          const justBeforeLease = plain.received(path).length
          yield* TestClock.adjust(1)
          yield* restarted.runOnce
          return [beforeLease, justBeforeLease, plain.received(path).length]
        })
      )
    }))

    expect(counts).toEqual([1, 1, 2])
    expect(abandoned).toBe(true)
    const [first, second] = plain.received(path)
    expect(second.headers["x-checkout-delivery"]).toBe(first.headers["x-checkout-delivery"])
    expect(second.body).toBe(first.body)
    expect(verifyWebhookSignature(second.body, second.headers["x-checkout-signature"] as string, secret)).toBe(true)
    const log = await harness.deliveriesOf(merchant)
    expect(log).toHaveLength(1)
    expect(log[0]).toMatchObject({ status: "delivered", attemptCount: 1 })
    expect(log[0].attempts).toHaveLength(1)
  })
})

describe("delivery log", () => {
  it("searches by delivery id, invoice id (whole or its 8-digit start), event, URL, response code or order reference, filters and pages; redelivers by hand", async () => {
    const merchant = await harness.newMerchant()
    const path = newPath()
    plain.on(path, (response) => response.writeHead(503).end())
    await harness.configure(merchant, plain.url(path))
    const first = await harness.createInvoice(merchant, { amountUsd: 3, merchantReference: "ORD-5521" })
    const second = await harness.createInvoice(merchant, { amountUsd: 4 })
    await merchant.api(`/api/checkout/invoices/${second.id}/void`, { body: {} })
    await harness.runOnce()

    const all = await harness.deliveriesOf(merchant)
    expect(all).toHaveLength(3)
    const target = all.find((delivery) => delivery.invoiceId === first.id)
    const ids = (deliveries: Array<{ id: string }>) => deliveries.map((delivery) => delivery.id)
    expect(ids(await harness.deliveriesOf(merchant, `?q=${target.id}`))).toEqual([target.id])
    expect(ids(await harness.deliveriesOf(merchant, `?q=${target.id.toUpperCase()}`))).toEqual([target.id])
    expect(await harness.deliveriesOf(merchant, `?q=${second.id}`)).toHaveLength(2)
    expect(await harness.deliveriesOf(merchant, "?q=invoice_voided")).toHaveLength(1)
    // The 8 characters the lists show: a delivery's, an invoice's (any case); and the order reference, whole or in part.
    expect(ids(await harness.deliveriesOf(merchant, `?q=${target.id.slice(0, 8)}`))).toEqual([target.id])
    expect(ids(await harness.deliveriesOf(merchant, `?q=${first.id.slice(0, 8).toUpperCase()}`))).toEqual([target.id])
    expect(await harness.deliveriesOf(merchant, `?q=${second.id.slice(0, 8)}`)).toHaveLength(2)
    expect(ids(await harness.deliveriesOf(merchant, "?q=ORD-5521"))).toEqual([target.id])
    expect(ids(await harness.deliveriesOf(merchant, "?q=ord-55"))).toEqual([target.id])
    expect(await harness.deliveriesOf(merchant, `?q=${encodeURIComponent(path.slice(0, 12))}`)).toHaveLength(3)
    expect(await harness.deliveriesOf(merchant, "?q=%25")).toHaveLength(0)
    expect(await harness.deliveriesOf(merchant, "?q=503")).toHaveLength(3)
    // No delivery answered 200; only a URL whose random port holds "200" may match that search.
    const urlMentions200 = all.filter((delivery) => delivery.url.includes("200"))
    expect(ids(await harness.deliveriesOf(merchant, "?q=200")).sort()).toEqual(ids(urlMentions200).sort())
    expect(await harness.deliveriesOf(merchant, "?event=invoice_created")).toHaveLength(2)
    expect(await harness.deliveriesOf(merchant, "?status=pending&event=invoice_voided")).toHaveLength(1)
    expect(await harness.deliveriesOf(merchant, "?status=delivered")).toHaveLength(0)

    const page = await merchant.dashboard("/api/dashboard/webhook-deliveries?limit=2")
    expect(page.body.deliveries).toHaveLength(2)
    const rest = await merchant.dashboard(`/api/dashboard/webhook-deliveries?limit=2&cursor=${page.body.nextCursor}`)
    expect(rest.body.deliveries).toHaveLength(1)
    expect(rest.body.nextCursor).toBeNull()
    expect(new Set([...ids(page.body.deliveries), ...ids(rest.body.deliveries)])).toEqual(new Set(ids(all)))
    for (const query of ["status=lost", "event=invoice_paid", "limit=0", "limit=201", "cursor=bm90LWEtY3Vyc29y"]) {
      expect((await merchant.dashboard(`/api/dashboard/webhook-deliveries?${query}`)).status, query).toBe(400)
    }

    plain.on(path, (response) => response.writeHead(200).end("ok"))
    const redelivered = await merchant.dashboard(`/api/dashboard/webhook-deliveries/${target.id}/redeliver`, { method: "POST" })
    expect(redelivered.status).toBe(200)
    expect(redelivered.body).toMatchObject({ id: target.id, status: "delivered", lastStatusCode: 200, attemptCount: 1, nextAttemptAt: null })
    expect(redelivered.body.attempts).toHaveLength(2)
    expect(redelivered.body.attempts[1]).toMatchObject({ manual: true, statusCode: 200, responseExcerpt: "ok" })
    expect(plain.received(path).at(-1)?.headers["x-checkout-delivery"]).toBe(target.id)
    expect(await harness.deliveriesOf(merchant, "?status=delivered")).toHaveLength(1)

    const stranger = await harness.newMerchant()
    expect((await stranger.dashboard(`/api/dashboard/webhook-deliveries/${target.id}/redeliver`, { method: "POST" })).status).toBe(404)
    expect(await harness.deliveriesOf(stranger, `?q=${target.id}`)).toHaveLength(0)
    expect(await merchant.dashboard("/api/dashboard/webhook-deliveries/not-a-uuid/redeliver", { method: "POST" })).toMatchObject({
      status: 400,
      body: { error: "id must be a valid UUID" }
    })
  })

  it("records a failed manual redelivery without changing the schedule", async () => {
    const merchant = await harness.newMerchant()
    const path = newPath()
    plain.on(path, (response) => response.writeHead(500).end())
    await harness.configure(merchant, plain.url(path))
    await harness.createInvoice(merchant)
    await harness.runOnce()
    const [before] = await harness.deliveriesOf(merchant)
    const redelivered = await merchant.dashboard(`/api/dashboard/webhook-deliveries/${before.id}/redeliver`, { method: "POST" })
    expect(redelivered.body).toMatchObject({ status: "pending", attemptCount: 1, nextAttemptAt: before.nextAttemptAt, lastStatusCode: 500 })
    expect(redelivered.body.attempts.map((attempt: { manual: boolean }) => attempt.manual)).toEqual([false, true])
  })
})
