import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { privateDatabase } from "../support/PrivateDatabase.ts"
import { publicRequest, startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import { startTcpProxy, type TcpProxy } from "../support/TcpProxy.ts"
import type { JsonBody } from "../support/Json.ts"

const serverUrl = process.env.DATABASE_URL
if (serverUrl === undefined) console.log("skipped: database faults (DATABASE_URL is not set; the embedded database has no connection to cut)")

const REQUEST_BUDGET_MS = 1_500
const UNAVAILABLE = /^The service is temporarily unavailable \(its database does not answer\); retry after 5 seconds$/
/** The first request on a stalled connection runs out of its budget, whose cause the service does not guess. */
const TIMED_OUT = /^The service could not finish the request in time; retry after 5 seconds$/

describe.skipIf(serverUrl === undefined)("the PostgreSQL connection stalled and refused", () => {
  let database: Awaited<ReturnType<typeof privateDatabase>>
  let proxy: TcpProxy
  let app: TestApp
  let merchant: TestMerchant
  let invoiceId: string

  beforeAll(async () => {
    database = await privateDatabase()
    const own = new URL(database.url ?? "")
    proxy = await startTcpProxy({ host: own.hostname, port: Number(own.port || 5432) })
    own.port = String(proxy.port)
    app = await startTestApp({ requestTimeoutMs: REQUEST_BUDGET_MS, databaseConnectTimeoutMs: 1_000 }, { DATABASE_URL: own.toString() })
    merchant = await app.createMerchant()
    invoiceId = (await merchant.api("/api/checkout/invoices", { body: { amountUsd: 5, productName: "T" } })).body.id
  })
  afterAll(async () => {
    await proxy?.restore()
    await app?.close()
    await proxy?.close()
    await database?.drop()
  })

  const publicStatus = () => publicRequest(app.baseUrl, `/api/checkout/pay/${invoiceId}/status`)
  const login = () =>
    publicRequest(app.baseUrl, "/api/auth/login", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "nobody@db-fault.test", password: "whatever it is" })
    })
  const expectUnavailable = (response: { status: number; body: JsonBody; headers: Headers }, message = UNAVAILABLE) => {
    expect(response.status).toBe(503)
    expect(response.body.error).toMatch(message)
    expect(response.headers.get("retry-after")).toBe("5")
  }
  const recovered = async () => {
    for (let attempt = 0; attempt < 60; attempt++) {
      if ((await publicStatus()).status === 200) return true
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    return false
  }

  it("answers 503 with Retry-After within the request budget while stalled, at once after that, and recovers by itself", async () => {
    expect((await publicStatus()).status).toBe(200)
    proxy.stall()
    expectUnavailable(await publicStatus(), TIMED_OUT)
    // Known unavailable now: answered without waiting for the stalled connection.
    const started = Date.now()
    expectUnavailable(await login())
    expectUnavailable(await merchant.api("/api/checkout/invoices", { body: { amountUsd: 5, productName: "T" } }))
    expectUnavailable(await merchant.api(`/api/checkout/invoices/${invoiceId}`))
    expect(Date.now() - started).toBeLessThan(REQUEST_BUDGET_MS)
    expect((await publicRequest(app.baseUrl, "/api/health")).status).toBe(200)

    await proxy.restore()
    expect(await recovered()).toBe(true)
    expect((await merchant.api("/api/checkout/invoices", { body: { amountUsd: 6, productName: "T" } })).status).toBe(201)
  })

  it("answers 503, never 500, while the server refuses connections, and recovers when it is back", async () => {
    await proxy.cut()
    expectUnavailable(await publicStatus())
    expectUnavailable(await login())
    await proxy.restore()
    expect(await recovered()).toBe(true)
    expect((await login()).status).toBe(401)
  })
})

describe.skipIf(serverUrl === undefined)("a PostgreSQL server that refuses new connections to the database (#52)", () => {
  let database: Awaited<ReturnType<typeof privateDatabase>>
  let app: TestApp
  let merchant: TestMerchant
  let invoiceId: string
  const name = () => new URL(database.url ?? "").pathname.slice(1)
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: serverUrl })
    await client.connect()
    try {
      await client.query(statement)
    } finally {
      await client.end()
    }
  }

  beforeAll(async () => {
    database = await privateDatabase()
    app = await startTestApp({ databaseConnectTimeoutMs: 2_000 }, { DATABASE_URL: database.url ?? "" })
    merchant = await app.createMerchant()
    invoiceId = (await merchant.api("/api/checkout/invoices", { body: { amountUsd: 5 } })).body.id
  })
  afterAll(async () => {
    await admin(`ALTER DATABASE ${name()} ALLOW_CONNECTIONS true`).catch(() => undefined)
    await app?.close()
    await database?.drop()
  })

  it("answers 503 with Retry-After, never 500, while the database does not allow connections (55000), and recovers", async () => {
    const publicStatus = () => publicRequest(app.baseUrl, `/api/checkout/pay/${invoiceId}/status`)
    expect((await publicStatus()).status).toBe(200)
    await admin(`ALTER DATABASE ${name()} ALLOW_CONNECTIONS false`)
    await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name()}' AND pid <> pg_backend_pid()`)
    const answers = [await publicStatus(), await publicStatus(), await merchant.api(`/api/checkout/invoices/${invoiceId}`)]
    for (const answer of answers) {
      expect(answer.status).toBe(503)
      expect(answer.headers.get("retry-after")).toBe("5")
    }
    await admin(`ALTER DATABASE ${name()} ALLOW_CONNECTIONS true`)
    let recovered = false
    for (let attempt = 0; attempt < 60 && !recovered; attempt++) {
      recovered = (await publicStatus()).status === 200
      if (!recovered) await new Promise((resolve) => setTimeout(resolve, 250))
    }
    expect(recovered).toBe(true)
  })
})
