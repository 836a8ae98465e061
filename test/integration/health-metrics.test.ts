import { NodeHttpServer } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import { createServer as createHttpServer } from "node:http"
import { createServer as createTcpServer, type Server, type Socket } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ServicesLive } from "../../src/App.ts"
import { AppConfig, parseConfig } from "../../src/config/AppConfig.ts"
import { HttpAppLive } from "../../src/Http.ts"
import { withCursorRows } from "../support/ChainCursors.ts"
import { publicRequest, startTestApp, type TestApp } from "../support/TestApp.ts"

/** The value of the sample `name{labels}` (labels exactly as rendered) in a Prometheus text body. */
const sample = (body: string, series: string): number | undefined => {
  const line = body.split("\n").find((candidate) => candidate.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

const scrape = async (baseUrl: string) => {
  const response = await fetch(`${baseUrl}/metrics`)
  return { status: response.status, contentType: response.headers.get("content-type"), body: await response.text() }
}

const BACKLOG_SQL = `SELECT (SELECT count(*) FROM outbox WHERE dispatched_at IS NULL)::int
  + (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending')::int AS backlog`

let app: TestApp

// Only bitcoin is watched here: the EVM watcher suites may share a PostgreSQL database with this one.
beforeAll(async () => {
  app = await startTestApp({ chains: { ...parseConfig({}).chains, endpoints: { bitcoin: "http://127.0.0.1:1" } } })
})
afterAll(() => app?.close())

describe("health", () => {
  it("answers liveness and readiness without credentials", async () => {
    expect(await publicRequest(app.baseUrl, "/api/health")).toMatchObject({ status: 200, body: { status: "ok" } })
    expect(await publicRequest(app.baseUrl, "/api/health/ready")).toMatchObject({ status: 200, body: { status: "ready" } })
  })

  it("documents both in the OpenAPI document", async () => {
    const { body } = await publicRequest(app.baseUrl, "/api/openapi.json")
    expect(Object.keys(body.paths)).toEqual(expect.arrayContaining(["/api/health", "/api/health/ready"]))
    expect(body.paths["/api/health/ready"].get.responses).toHaveProperty("503")
  })
})

/** The service's HTTP app with its own SQL client replaced, over real HTTP on loopback. */
const startWithDatabase = async (database: Layer.Layer<SqlClient.SqlClient>) => {
  const env = { CHECKOUT_ENV: "test", CHECKOUT_DATA_DIR: "memory://", CHECKOUT_DEMO: "false", PORT: "0", DATABASE_URL: process.env.DATABASE_URL }
  const config = { ...parseConfig(env), role: "api" as const }
  const server = HttpRouter.serve(HttpAppLive.pipe(Layer.provide(database)), { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createHttpServer, { port: 0, host: "127.0.0.1" })),
    Layer.provide(ServicesLive),
    Layer.provide(Layer.succeed(AppConfig, config))
  )
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(server, scope))
  const address = Context.get(context, HttpServer.HttpServer).address
  if (!("port" in address)) throw new Error("expected a TCP address")
  return { baseUrl: `http://127.0.0.1:${address.port}`, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

const pgAt = (port: number) => PgClient.layer({ host: "127.0.0.1", port, database: "postgres", username: "postgres" }).pipe(Layer.orDie)

describe("readiness when the database does not answer", () => {
  let refused: Awaited<ReturnType<typeof startWithDatabase>>
  let hanging: Awaited<ReturnType<typeof startWithDatabase>>
  let silent: Server
  const sockets = new Set<Socket>()

  beforeAll(async () => {
    // Accepts connections and never answers: a database that hangs.
    silent = createTcpServer((socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
    })
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve))
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createTcpServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number }
        probe.close(() => resolve(port))
      })
    })
    refused = await startWithDatabase(pgAt(closedPort))
    hanging = await startWithDatabase(pgAt((silent.address() as { port: number }).port))
  })
  afterAll(async () => {
    for (const socket of sockets) socket.destroy()
    await refused?.close()
    await hanging?.close()
    silent?.close()
  })

  it("answers 503 with Retry-After when the connection is refused, liveness still 200", async () => {
    const ready = await publicRequest(refused.baseUrl, "/api/health/ready")
    expect(ready).toMatchObject({ status: 503, body: { error: "Database unavailable" } })
    expect(ready.headers.get("retry-after")).toBe("5")
    expect(await publicRequest(refused.baseUrl, "/api/health")).toMatchObject({ status: 200, body: { status: "ok" } })
  })

  it("answers 503 within the 2 s bound when the database hangs", async () => {
    const started = Date.now()
    const ready = await publicRequest(hanging.baseUrl, "/api/health/ready")
    const elapsed = Date.now() - started
    expect(ready).toMatchObject({ status: 503, body: { error: "Database unavailable" } })
    expect(ready.headers.get("retry-after")).toBe("5")
    expect(elapsed).toBeGreaterThanOrEqual(1_900)
    expect(elapsed).toBeLessThan(4_000)
  })

  it("still serves /metrics, without the database gauges and with checkout_database_up 0", async () => {
    const metrics = await scrape(refused.baseUrl)
    expect(metrics.status).toBe(200)
    expect(sample(metrics.body, "checkout_database_up")).toBe(0)
    expect(metrics.body).not.toContain("checkout_webhook_backlog ")
    expect(metrics.body).not.toContain("checkout_chain_")
  })
})

describe("GET /metrics", () => {
  it("is Prometheus text, without credentials", async () => {
    const metrics = await scrape(app.baseUrl)
    expect(metrics.status).toBe(200)
    expect(metrics.contentType).toMatch(/^text\/plain; version=0\.0\.4/)
    expect(metrics.body).toContain("# TYPE http_requests_total counter")
    expect(metrics.body).toContain("# TYPE http_request_duration_seconds histogram")
  })

  it("labels requests with the route template, never the raw path", async () => {
    const merchant = await app.createMerchant()
    const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 12 } })
    expect(created.status).toBe(201)
    const id: string = created.body.id
    const detail = "http_requests_total{method=\"GET\",route=\"/api/checkout/invoices/:id\",status=\"200\"}"
    const missing = "http_requests_total{method=\"GET\",route=\"/api/checkout/invoices/:id\",status=\"404\"}"
    const unmatched = "http_requests_total{method=\"GET\",route=\"unmatched\",status=\"404\"}"
    const before = (await scrape(app.baseUrl)).body

    expect((await merchant.api(`/api/checkout/invoices/${id}`)).status).toBe(200)
    expect((await merchant.api(`/api/checkout/invoices/${crypto.randomUUID()}`)).status).toBe(404)
    expect((await publicRequest(app.baseUrl, `/no/such/route/${id}`)).status).toBe(404)

    const after = (await scrape(app.baseUrl)).body
    expect((sample(after, detail) ?? 0) - (sample(before, detail) ?? 0)).toBe(1)
    expect((sample(after, missing) ?? 0) - (sample(before, missing) ?? 0)).toBe(1)
    expect((sample(after, unmatched) ?? 0) - (sample(before, unmatched) ?? 0)).toBe(1)
    expect(sample(after, "http_request_duration_seconds_count{method=\"GET\",route=\"/api/checkout/invoices/:id\"}")).toBeGreaterThanOrEqual(2)
    expect(after).toContain("http_requests_total{method=\"POST\",route=\"/api/checkout/invoices\",status=\"201\"}")
    expect(after).toContain("http_requests_total{method=\"GET\",route=\"/metrics\",status=\"200\"}")
    expect(after).not.toContain(id)
    expect(after).not.toContain("/no/such/route")
  })

  it("reports the watched networks' chain state from chain_cursors, and only theirs", async () => {
    const headTime = new Date("2026-11-20T12:00:00.000Z")
    const chainTime = new Date(headTime.getTime() - 90_000)
    await withCursorRows(app, async (upsert) => {
      await upsert({
        network: "bitcoin",
        processedHeight: "850000",
        chainTime,
        headHeight: "850003",
        headTime,
        lastError: "Esplora answered 502"
      })
      await upsert({ network: "solana", processedHeight: "300000000", chainTime, headHeight: "300000100", headTime, lastError: null })

      const body = (await scrape(app.baseUrl)).body
      expect(sample(body, "checkout_chain_head_height{network=\"bitcoin\"}")).toBe(850003)
      expect(sample(body, "checkout_chain_processed_height{network=\"bitcoin\"}")).toBe(850000)
      expect(sample(body, "checkout_chain_lag_seconds{network=\"bitcoin\"}")).toBe(90)
      expect(sample(body, "checkout_chain_last_error{network=\"bitcoin\"}")).toBe(1)
      for (const network of ["solana", "ethereum", "arbitrum", "base"]) expect(body).not.toContain(`network="${network}"`)

      // A head behind the processed block's time (clock skew between blocks) is no lag, never negative.
      await upsert({
        network: "bitcoin",
        processedHeight: "850001",
        chainTime,
        headHeight: "850001",
        headTime: new Date(chainTime.getTime() - 5_000),
        lastError: null
      })
      const next = (await scrape(app.baseUrl)).body
      expect(sample(next, "checkout_chain_processed_height{network=\"bitcoin\"}")).toBe(850001)
      expect(sample(next, "checkout_chain_lag_seconds{network=\"bitcoin\"}")).toBe(0)
      expect(sample(next, "checkout_chain_last_error{network=\"bitcoin\"}")).toBe(0)
    })
  })

  it("counts the webhook backlog: undispatched outbox events plus pending deliveries", async () => {
    const merchant = await app.createMerchant()
    const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 3 } })
    const invoiceId: string = created.body.id
    const backlog = () => app.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<{ backlog: number }>(BACKLOG_SQL)).pipe(Effect.map((rows) => rows[0].backlog)))
    await app.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // Counted: two more undispatched events and three pending deliveries. Not counted: a dispatched event, a delivered and a failed delivery.
      yield* sql`INSERT INTO outbox (invoice_id, merchant_id, event, dispatched_at) VALUES
        (${invoiceId}, ${merchant.merchantId}, 'invoice_voided', NULL), (${invoiceId}, ${merchant.merchantId}, 'invoice_voided', NULL),
        (${invoiceId}, ${merchant.merchantId}, 'invoice_voided', now())`
      for (const status of ["pending", "pending", "pending", "delivered", "failed"]) {
        yield* sql`INSERT INTO webhook_deliveries (id, merchant_id, invoice_id, event, url, status, created_at, updated_at)
          VALUES (${crypto.randomUUID()}, ${merchant.merchantId}, ${invoiceId}, 'invoice_created', 'https://hooks.example.com/x', ${status}, now(), now())`
      }
    }))
    // Other suites sharing a PostgreSQL database may change the backlog meanwhile: the gauge must lie between the counts read around the scrape.
    const low = await backlog()
    const gauge = sample((await scrape(app.baseUrl)).body, "checkout_webhook_backlog")
    const high = await backlog()
    expect(low).toBeGreaterThanOrEqual(6)
    expect(gauge).toBeGreaterThanOrEqual(Math.min(low, high))
    expect(gauge).toBeLessThanOrEqual(Math.max(low, high))
    expect(sample((await scrape(app.baseUrl)).body, "checkout_database_up")).toBe(1)
  })
})
