import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEMO_METHODS } from "../../src/demo/DemoMerchant.ts"
import { InvoiceId, type MerchantId } from "../../src/domain/Ids.ts"
import { centsToMicros } from "../../src/domain/Money.ts"
import { CheckoutSettingsRepo } from "../../src/payments/CheckoutSettingsRepo.ts"
import { OptionPlanner } from "../../src/payments/OptionPlanner.ts"
import { publicRequest, startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"

// Issue #55 item 3 (dashboard side) and item 7: test invoices, payments, refunds and deliveries stay
// out of every live view of the dashboard, and live ones out of every test view; checkout settings
// exist once per mode, test invoices using the live settings until test settings are saved.
// Test invoices are made here by setting livemode = false (test keys are another part of #55).

const SOLANA_RECIPIENT = DEMO_METHODS.find((method) => method.network === "solana")!.recipientAddress

let app: TestApp
let merchant: TestMerchant

beforeAll(async () => {
  app = await startTestApp({ refundRequestRateLimitPerMinute: 1_000_000 })
  merchant = await app.createMerchant()
})
afterAll(async () => {
  await app?.close()
})

const sql = <A>(use: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => app.run(Effect.orDie(Effect.flatMap(SqlClient.SqlClient, use)))

interface Created {
  readonly id: string
  readonly paymentOptions: ReadonlyArray<{ readonly id: string; readonly network: string; readonly quotedAmount: number }>
}

const create = async (owner: TestMerchant, amountUsd: number, merchantReference: string): Promise<Created> => {
  const created = await owner.api("/api/checkout/invoices", { body: { amountUsd, merchantReference } })
  expect(created.status).toBe(201)
  return created.body
}

const makeTest = (id: string) => sql((sql) => sql`UPDATE invoices SET livemode = false WHERE id = ${id}`)

// not a chain hash: a test invoice's simulated payment never claims a real transaction
const txHash = () => `test_${crypto.randomUUID()}`

/** Pays `amountUsd` of the invoice's ethereum option (USDC, 1:1), confirmed. */
const pay = async (owner: TestMerchant, invoice: Created, amount: string) => {
  const option = invoice.paymentOptions.find((candidate) => candidate.network === "ethereum")!
  const paid = await owner.dashboard(`/api/dev/invoices/${invoice.id}/simulate-payment`, {
    body: { paymentOptionId: option.id, amount, confirmations: 1_000, transactionHash: txHash() }
  })
  expect(paid.status).toBe(200)
  return option.id
}

const ids = (rows: ReadonlyArray<{ readonly id: string }>) => rows.map((row) => row.id).sort()

/** One live and one test invoice of each kind the views show, made once for the suite. */
const world = async (owner: TestMerchant) => {
  const live = await create(owner, 20, "LIVE-1")
  const test = await create(owner, 30, "TEST-1")
  await makeTest(test.id)
  // Each overpaid by 5 (a refund to ask for) and expired with an exception open.
  const liveOption = await pay(owner, live, "25")
  const testOption = await pay(owner, test, "35")
  const liveExpired = await create(owner, 40, "LIVE-2")
  const testExpired = await create(owner, 50, "TEST-2")
  await makeTest(testExpired.id)
  await pay(owner, liveExpired, "1")
  await pay(owner, testExpired, "2")
  for (const invoice of [liveExpired, testExpired]) {
    expect((await owner.dashboard(`/api/dev/invoices/${invoice.id}/simulate-expiry`, { method: "POST", body: {} })).status).toBe(200)
  }
  for (const [invoice, option] of [[live, liveOption], [test, testOption]] as const) {
    const asked = await publicRequest(app.baseUrl, `/api/checkout/pay/${invoice.id}/refunds`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ paymentOptionId: option, refundAddress: "0x52908400098527886E0F7030069857D2E4169EE7" })
    })
    expect(asked.status).toBe(201)
  }
  const now = new Date()
  await sql((sql) =>
    Effect.gen(function*() {
      for (const invoice of [live, test]) {
        yield* sql`INSERT INTO webhook_deliveries ${
          sql.insert({ id: crypto.randomUUID(), merchantId: owner.merchantId, invoiceId: invoice.id, event: "invoice_confirmed", url: "https://shop.example/hook",
            status: "delivered", livemode: invoice === live, createdAt: now, updatedAt: now })
        }`
        yield* sql`INSERT INTO unmatched_deposits ${
          sql.insert({
            id: crypto.randomUUID(),
            merchantId: owner.merchantId,
            invoiceId: invoice.id,
            network: "ethereum",
            assetCode: "USDT",
            tokenContract: "0xdac17f958d2ee523a2206206994597c13d831ec7",
            toAddress: "0x0000000000000000000000000000000000000001",
            transactionHash: txHash(),
            outputIndex: 0,
            amountAtomic: "1000000",
            chainTime: now,
            reason: "wrong token",
            detectedAt: now
          })
        }`
      }
    })
  )
  return { live, test, liveExpired, testExpired }
}

let made: Awaited<ReturnType<typeof world>>
const dashboard = (path: string) => merchant.dashboard(path)

describe("the dashboard keeps live and test data apart", () => {
  beforeAll(async () => {
    made = await world(merchant)
  }, 120_000)

  it("lists live invoices by default and with livemode=true, test invoices only with livemode=false", async () => {
    const live = [made.live.id, made.liveExpired.id].sort()
    const test = [made.test.id, made.testExpired.id].sort()
    expect(ids((await dashboard("/api/dashboard/invoices")).body.invoices)).toEqual(live)
    expect(ids((await dashboard("/api/dashboard/invoices?livemode=true")).body.invoices)).toEqual(live)
    expect(ids((await dashboard("/api/dashboard/invoices?livemode=false")).body.invoices)).toEqual(test)
    // Each listed invoice says its mode, as every answer carrying an invoice does.
    const modes = async (query: string) => (await dashboard(`/api/dashboard/invoices${query}`)).body.invoices.map((invoice: { livemode: boolean }) => invoice.livemode)
    expect(await modes("")).toEqual([true, true])
    expect(await modes("?livemode=false")).toEqual([false, false])
    // A search, a filter or a cursor never crosses into the other mode.
    expect(ids((await dashboard("/api/dashboard/invoices?q=TEST")).body.invoices)).toEqual([])
    expect(ids((await dashboard("/api/dashboard/invoices?q=LIVE&livemode=false")).body.invoices)).toEqual([])
    expect(ids((await dashboard(`/api/dashboard/invoices?q=${made.test.id}`)).body.invoices)).toEqual([])
    const first = await dashboard("/api/dashboard/invoices?livemode=false&limit=1")
    const next = await dashboard(`/api/dashboard/invoices?livemode=false&limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`)
    expect([...ids(first.body.invoices), ...ids(next.body.invoices)].sort()).toEqual(test)
    expect(next.body.nextCursor).toBeNull()
  })

  it("keeps each mode's open exceptions in its own queue", async () => {
    expect(ids((await dashboard("/api/dashboard/invoices?exceptionStatus=open")).body.invoices)).toEqual([made.liveExpired.id])
    expect(ids((await dashboard("/api/dashboard/invoices?exceptionStatus=open&livemode=false")).body.invoices)).toEqual([made.testExpired.id])
  })

  it("exports each mode's invoices only", async () => {
    const csv = async (query: string) => {
      const response = await fetch(`${app.baseUrl}/api/dashboard/exports/invoices.csv${query}`, { headers: { authorization: `Bearer ${merchant.sessionToken}` } })
      expect(response.status).toBe(200)
      return (await response.text()).trim().split("\r\n").slice(1).map((row) => row.split(",")[0]).sort()
    }
    expect(await csv("")).toEqual([made.live.id, made.liveExpired.id].sort())
    expect(await csv("?livemode=false")).toEqual([made.test.id, made.testExpired.id].sort())
  })

  it("sums each mode's invoices, payments, exceptions and refunds in its own overview", async () => {
    const overview = async (query: string) => {
      const answer = await dashboard(`/api/dashboard/overview${query}`)
      expect(answer.status).toBe(200)
      const counts = Object.fromEntries(
        answer.body.invoicesByStatus.filter((row: { count: number }) => row.count > 0).map((row: { status: string; count: number }) => [row.status, row.count])
      )
      const received = answer.body.receivedByDay.reduce((sum: number, day: { amountUsd: number }) => sum + day.amountUsd, 0)
      return { counts, received, openExceptions: answer.body.openExceptions, waitingRefunds: answer.body.waitingRefunds }
    }
    expect(await overview("")).toEqual({ counts: { confirmed: 1, expired: 1 }, received: 26, openExceptions: 1, waitingRefunds: 1 })
    expect(await overview("?livemode=false")).toEqual({ counts: { confirmed: 1, expired: 1 }, received: 37, openExceptions: 1, waitingRefunds: 1 })
    // A mode with nothing in it shows nothing, not the other mode's figures.
    const fresh = await app.createMerchant()
    const testOnly = await create(fresh, 10, "T")
    await makeTest(testOnly.id)
    await pay(fresh, testOnly, "10")
    const empty = await fresh.dashboard("/api/dashboard/overview")
    expect(empty.body.invoicesByStatus.every((row: { count: number }) => row.count === 0)).toBe(true)
    expect(empty.body.receivedByDay.every((day: { amountUsd: number }) => day.amountUsd === 0)).toBe(true)
  })

  it("lists each mode's refunds, webhook deliveries, unmatched deposits and forwarder sweeps only", async () => {
    const invoiceIds = async (path: string, field: string) => {
      const answer = await dashboard(path)
      expect(answer.status).toBe(200)
      return answer.body[field].map((row: { invoiceId: string }) => row.invoiceId).sort()
    }
    for (const [path, field] of [
      ["/api/dashboard/refunds", "data"],
      ["/api/dashboard/webhook-deliveries", "deliveries"],
      ["/api/dashboard/unmatched-deposits", "data"]
    ] as const) {
      expect(await invoiceIds(path, field), path).toEqual([made.live.id])
      expect(await invoiceIds(`${path}?livemode=true`, field)).toEqual([made.live.id])
      expect(await invoiceIds(`${path}?livemode=false`, field)).toEqual([made.test.id])
    }
    // Wallet-contract payments (the ethereum option) are swept: each mode's invoices' in its own list.
    expect([...new Set(await invoiceIds("/api/dashboard/forwarder-sweeps", "data"))]).toEqual([made.live.id, made.liveExpired.id].sort())
    expect([...new Set(await invoiceIds("/api/dashboard/forwarder-sweeps?livemode=false", "data"))]).toEqual([made.test.id, made.testExpired.id].sort())
  })

  it("answers a livemode that is neither true nor false with a 400 in the {error} shape", async () => {
    for (
      const path of [
        "/api/dashboard/invoices",
        "/api/dashboard/exports/invoices.csv",
        "/api/dashboard/overview",
        "/api/dashboard/refunds",
        "/api/dashboard/webhook-deliveries",
        "/api/dashboard/unmatched-deposits",
        "/api/dashboard/forwarder-sweeps",
        "/api/dashboard/checkout-settings"
      ]
    ) {
      for (const value of ["yes", "FALSE", "0", ""]) {
        const answer = await dashboard(`${path}?livemode=${value}`)
        expect({ path, value, status: answer.status, body: answer.body }).toEqual({ path, value, status: 400, body: { error: "livemode must be true or false" } })
      }
    }
  })
})

type Command =
  | { readonly kind: "create"; readonly livemode: boolean; readonly amountUsd: number }
  | { readonly kind: "pay"; readonly index: number; readonly amount: number }
  | { readonly kind: "expire"; readonly index: number }

const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ kind: fc.constant("create" as const), livemode: fc.boolean(), amountUsd: fc.integer({ min: 1, max: 50 }) }),
  fc.record({ kind: fc.constant("pay" as const), index: fc.nat(), amount: fc.integer({ min: 1, max: 60 }) }),
  fc.record({ kind: fc.constant("expire" as const), index: fc.nat() })
)

/** What each mode's views show of one account: its invoice ids (list, queue, CSV) and its overview's sums. */
const modeViews = async (owner: TestMerchant, livemode: boolean) => {
  const query = livemode ? "" : "?livemode=false"
  const list = await owner.dashboard(`/api/dashboard/invoices${query}`)
  const queue = await owner.dashboard(`/api/dashboard/invoices?exceptionStatus=open${livemode ? "" : "&livemode=false"}`)
  const csv = await fetch(`${app.baseUrl}/api/dashboard/exports/invoices.csv${query}`, { headers: { authorization: `Bearer ${owner.sessionToken}` } }).then((response) =>
    response.text()
  )
  const overview = (await owner.dashboard(`/api/dashboard/overview${query}`)).body
  return {
    listed: ids(list.body.invoices),
    queued: ids(queue.body.invoices),
    exported: csv.trim().split("\r\n").slice(1).map((row) => row.split(",")[0]).sort(),
    counted: overview.invoicesByStatus.reduce((sum: number, row: { count: number }) => sum + row.count, 0),
    received: overview.receivedByDay.reduce((sum: number, day: { amountUsd: number }) => sum + day.amountUsd, 0),
    openExceptions: overview.openExceptions
  }
}

describe("random interleavings of live and test invoices", () => {
  it("never show a test invoice or its payments in a live view, nor a live one in a test view", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(commandArbitrary, { minLength: 1, maxLength: 6 }), async (commands) => {
        const owner = await app.createMerchant()
        const made: Array<{ readonly invoice: Created; readonly livemode: boolean }> = []
        const received = { live: 0, test: 0 }
        for (const command of commands) {
          if (command.kind === "create") {
            const invoice = await create(owner, command.amountUsd, command.livemode ? "LIVE" : "TEST")
            if (!command.livemode) await makeTest(invoice.id)
            made.push({ invoice, livemode: command.livemode })
            continue
          }
          const target = made[command.index % Math.max(made.length, 1)]
          if (target === undefined) continue
          if (command.kind === "expire") {
            await owner.dashboard(`/api/dev/invoices/${target.invoice.id}/simulate-expiry`, { method: "POST", body: {} })
            continue
          }
          const option = target.invoice.paymentOptions.find((candidate) => candidate.network === "ethereum")!
          const paid = await owner.dashboard(`/api/dev/invoices/${target.invoice.id}/simulate-payment`, {
            body: { paymentOptionId: option.id, amount: String(command.amount), confirmations: 1_000, transactionHash: txHash() }
          })
          if (paid.status === 200) received[target.livemode ? "live" : "test"] += command.amount
        }
        for (const livemode of [true, false]) {
          const own = made.filter((entry) => entry.livemode === livemode).map((entry) => entry.invoice.id).sort()
          const views = await modeViews(owner, livemode)
          expect(views.listed).toEqual(own)
          expect(views.exported).toEqual(own)
          expect(views.counted).toBe(own.length)
          expect(views.queued.every((id: string) => own.includes(id))).toBe(true)
          expect(views.openExceptions).toBe(views.queued.length)
          expect(views.received).toBeCloseTo(received[livemode ? "live" : "test"], 6)
        }
      }),
      { numRuns: 8 }
    )
  }, 300_000)
})

describe("checkout settings per mode", () => {
  const settingsRepo = <A>(use: (repo: CheckoutSettingsRepo["Service"]) => Effect.Effect<A>) => app.run(Effect.flatMap(CheckoutSettingsRepo, use))
  const planNetworks = (merchantId: MerchantId, livemode: boolean) =>
    app.run(Effect.orDie(Effect.flatMap(OptionPlanner, (planner) =>
      planner.plan({
        merchantId,
        livemode,
        invoiceId: InvoiceId.make(crypto.randomUUID()),
        amountMicros: centsToMicros(10),
        createdAt: new Date(),
        timing: undefined,
        issuedBy: undefined
      })))).then((plan) => plan.options.map((option) => option.network).sort())

  // Planning an invoice advances the extended keys' counters (nextIndex, and the warning of keys never
  // issued from): the rest is compared.
  const withoutCounters = (body: { paymentMethods: Array<Record<string, unknown>> }) => ({
    ...body,
    warnings: undefined,
    paymentMethods: body.paymentMethods.map(({ nextIndex: _nextIndex, ...method }) => method)
  })

  it("uses the live settings for test invoices until test settings are saved, then each mode its own", async () => {
    const owner = await app.createMerchant()
    const live = await owner.dashboard("/api/dashboard/checkout-settings")
    expect(live.status).toBe(200)
    expect(live.body.livemode).toBe(true)
    const liveNetworks = [...new Set(live.body.paymentMethods.map((method: { network: string }) => method.network) as Array<string>)].sort()

    // Before test settings: the test read answers the live settings, and says so; test invoices get the live methods.
    const fallback = await owner.dashboard("/api/dashboard/checkout-settings?livemode=false")
    expect(fallback.status).toBe(200)
    expect(withoutCounters(fallback.body)).toEqual(withoutCounters(live.body))
    expect(await planNetworks(owner.merchantId, false)).toEqual(liveNetworks)
    expect((await settingsRepo((repo) => repo.find(owner.merchantId, false))).livemode).toBe(true)

    const testBody = {
      issuedBy: "Test Store (sandbox)",
      paymentTiming: { mode: "immediate", expiresAfterMinutes: 15 },
      paymentMethods: [{ network: "solana", assetCode: "USDC", railType: "address_transfer", recipientAddress: SOLANA_RECIPIENT, isDefault: true }],
      embedOrigins: ["https://sandbox.shop.example"]
    }
    const saved = await owner.dashboard("/api/dashboard/checkout-settings?livemode=false", { method: "PUT", body: testBody })
    expect(saved.body.error).toBeUndefined()
    expect(saved.body).toMatchObject({ livemode: false, issuedBy: "Test Store (sandbox)", paymentTiming: { mode: "immediate", expiresAfterMinutes: 15 },
      embedOrigins: ["https://sandbox.shop.example"] })
    expect(saved.body.paymentMethods).toHaveLength(1)

    // The live settings are untouched; each read and each plan takes its own mode's.
    expect(withoutCounters((await owner.dashboard("/api/dashboard/checkout-settings")).body)).toEqual(withoutCounters(live.body))
    expect(await owner.dashboard("/api/dashboard/checkout-settings?livemode=false")).toMatchObject({ status: 200, body: saved.body })
    expect(await planNetworks(owner.merchantId, false)).toEqual(["solana"])
    expect(await planNetworks(owner.merchantId, true)).toEqual(liveNetworks)

    // A live save leaves the test settings as they are.
    const liveAgain = await owner.dashboard("/api/dashboard/checkout-settings", { method: "PUT",
      body: { ...live.body, issuedBy: "Live Store", embedOrigins: ["https://shop.example"] } })
    expect(liveAgain.status).toBe(200)
    expect(liveAgain.body).toMatchObject({ livemode: true, issuedBy: "Live Store" })
    expect((await owner.dashboard("/api/dashboard/checkout-settings?livemode=false")).body).toEqual(saved.body)

    // A test invoice's payment page may be framed by the test settings' origins, a live one's by the live settings'.
    const liveInvoice = await create(owner, 10, "L")
    const testInvoice = await create(owner, 10, "T")
    await makeTest(testInvoice.id)
    expect(await settingsRepo((repo) => repo.embedOriginsOfInvoice(liveInvoice.id))).toEqual(["https://shop.example"])
    expect(await settingsRepo((repo) => repo.embedOriginsOfInvoice(testInvoice.id))).toEqual(["https://sandbox.shop.example"])
  })

  it("gives a test invoice the live settings' embed origins until test settings are saved", async () => {
    const owner = await app.createMerchant()
    const live = await owner.dashboard("/api/dashboard/checkout-settings")
    expect((await owner.dashboard("/api/dashboard/checkout-settings", { method: "PUT", body: { ...live.body, embedOrigins: ["https://shop.example"] } })).status).toBe(200)
    const testInvoice = await create(owner, 10, "T")
    await makeTest(testInvoice.id)
    expect(await settingsRepo((repo) => repo.embedOriginsOfInvoice(testInvoice.id))).toEqual(["https://shop.example"])
  })

  it("keeps a merchant without settings unconfigured in both modes", async () => {
    const owner = await app.createMerchant({ withSettings: false })
    for (const livemode of [true, false]) {
      expect(await settingsRepo((repo) => repo.find(owner.merchantId, livemode))).toMatchObject({ configured: false, methods: [] })
    }
  })
})

describe("/metrics", () => {
  it("carries no figure that test invoices move, other than requests and the webhook backlog", async () => {
    const scrape = async () => {
      const response = await fetch(`${app.baseUrl}/metrics`)
      expect(response.status).toBe(200)
      const text = await response.text()
      // Requests are counted whatever they carry; a test invoice's webhooks are delivered like any (to the test URL).
      return text.split("\n").filter((line) => !line.startsWith("#") && !/^http_request|^checkout_webhook_backlog/.test(line)).join("\n")
    }
    const before = await scrape()
    const invoice = await create(merchant, 15, "TEST-METRICS")
    await makeTest(invoice.id)
    await pay(merchant, invoice, "15")
    expect(await scrape()).toEqual(before)
  })
})
