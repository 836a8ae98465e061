/**
 * Counts the SQL work per request of the service and of the raw baseline, on the wire: each
 * target talks to PostgreSQL through a small counting proxy that reads the frontend protocol
 * (Query, Parse, Bind, Execute, Sync) and attributes every execution to its SQL text.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/checkout_bench \
 *     node --experimental-strip-types scripts/bench/query-count.ts [requests per scenario, default 50]
 *
 * Requests are sent one at a time; background work they trigger (the bitcoin pool refill) is
 * counted too, amortised over the requests. Needs a PostgreSQL server (not PGlite).
 */
import { connect, createServer, type Socket } from "node:net"
import { join } from "node:path"
import { freePort, ROOT, type Seeded, startNode, stop, waitForHttp } from "./shared.ts"

const databaseUrl = process.env.DATABASE_URL
if (databaseUrl === undefined || databaseUrl === "") {
  console.error("query-count needs DATABASE_URL (a PostgreSQL server)")
  process.exit(2)
}
const REQUESTS = Number(process.argv[2] ?? "50")
const upstream = new URL(databaseUrl)

interface Counters {
  messages: Record<string, number>
  statements: Map<string, number>
}
const fresh = (): Counters => ({ messages: {}, statements: new Map() })

/** A proxy to PostgreSQL that counts the client's messages. */
const countingProxy = async (counters: { current: Counters }) => {
  const port = await freePort()
  const server = createServer((client: Socket) => {
    const server = connect(Number(upstream.port || 5432), upstream.hostname)
    client.pipe(server)
    server.pipe(client)
    client.on("error", () => server.destroy())
    server.on("error", () => client.destroy())
    let buffer = Buffer.alloc(0)
    let startup = true
    const prepared = new Map<string, string>() // statement name -> SQL ("" = unnamed)
    const portals = new Map<string, string>() // portal -> SQL
    const count = (key: string) => (counters.current.messages[key] = (counters.current.messages[key] ?? 0) + 1)
    const statement = (sql: string) => {
      const normalized = sql.replace(/\s+/g, " ").trim()
      counters.current.statements.set(normalized, (counters.current.statements.get(normalized) ?? 0) + 1)
    }
    const cstring = (data: Buffer, offset: number): [string, number] => {
      const end = data.indexOf(0, offset)
      return [data.toString("utf8", offset, end), end + 1]
    }
    client.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk])
      while (true) {
        if (startup) {
          if (buffer.length < 8) return
          const length = buffer.readInt32BE(0)
          if (buffer.length < length) return
          const code = buffer.readInt32BE(4)
          buffer = buffer.subarray(length)
          if (code !== 80877103 && code !== 80877104) startup = false // SSL/GSS requests precede the startup message
          continue
        }
        if (buffer.length < 5) return
        const type = String.fromCharCode(buffer[0])
        const length = buffer.readInt32BE(1)
        if (buffer.length < 1 + length) return
        const body = buffer.subarray(5, 1 + length)
        buffer = buffer.subarray(1 + length)
        count(type)
        if (type === "Q") statement(cstring(body, 0)[0])
        if (type === "P") {
          const [name, next] = cstring(body, 0)
          prepared.set(name, cstring(body, next)[0])
        }
        if (type === "B") {
          const [portal, next] = cstring(body, 0)
          portals.set(portal, prepared.get(cstring(body, next)[0]) ?? "(unknown prepared statement)")
        }
        if (type === "E") statement(portals.get(cstring(body, 0)[0]) ?? "(unknown portal)")
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  const url = new URL(databaseUrl)
  url.hostname = "127.0.0.1"
  url.port = String(port)
  return { url: url.toString(), close: () => server.close() }
}

const setup = async (label: string): Promise<Seeded> =>
  (await startNode(join(import.meta.dirname, "setup.ts"), ["--label", label, "--reads", "5"], process.env, { label: `setup ${label}` }).firstJson) as unknown as Seeded

const serviceCounters = { current: fresh() }
const baselineCounters = { current: fresh() }
const serviceProxy = await countingProxy(serviceCounters)
const baselineProxy = await countingProxy(baselineCounters)
const serviceSeed = await setup("service")
const baselineSeed = await setup("baseline")

const servicePort = await freePort()
const service = startNode(join(ROOT, "src", "main.ts"), [], {
  ...process.env,
  DATABASE_URL: serviceProxy.url,
  PORT: String(servicePort),
  CHECKOUT_ENV: "test",
  CHECKOUT_DEMO: "false",
  CHECKOUT_ROLE: "api",
  CHECKOUT_API_RATE_LIMIT: "1000000"
}, { label: "service" })
await waitForHttp(`http://127.0.0.1:${servicePort}/api/checkout/pay/${serviceSeed.invoiceIds[0]}/status`, service)
const baselinePort = await freePort()
const baseline = startNode(join(import.meta.dirname, "raw-server.ts"), [], {
  ...process.env,
  DATABASE_URL: baselineProxy.url,
  PORT: String(baselinePort)
}, { label: "baseline" })
await baseline.firstJson

const SCENARIOS = ["create", "detail", "status", "public status"] as const
const call = async (scenario: (typeof SCENARIOS)[number], port: number, seed: Seeded, index: number) => {
  const id = seed.invoiceIds[index % seed.invoiceIds.length]
  const base = `http://127.0.0.1:${port}`
  const key = { "x-api-key": seed.apiKey }
  const response = scenario === "create"
    ? await fetch(`${base}/api/checkout/invoices`, { method: "POST", headers: { ...key, "content-type": "application/json" }, body: JSON.stringify({ amountUsd: 25.5 }) })
    : await fetch(`${base}${scenario === "public status" ? `/api/checkout/pay/${id}/status` : `/api/checkout/invoices/${id}${scenario === "status" ? "/status" : ""}`}`, {
      headers: scenario === "public status" ? {} : key
    })
  await response.arrayBuffer()
  if (response.status >= 300) throw new Error(`${scenario}: ${response.status}`)
}

const perRequest = (value: number | undefined) => Number(((value ?? 0) / REQUESTS).toFixed(2))
const short = (sql: string) => (sql.length > 110 ? `${sql.slice(0, 107)}...` : sql)

// Warm both (connections opened, statements prepared), then count.
for (const scenario of SCENARIOS) {
  for (let index = 0; index < 5; index++) {
    await call(scenario, servicePort, serviceSeed, index)
    await call(scenario, baselinePort, baselineSeed, index)
  }
}
for (const scenario of SCENARIOS) {
  const measured: Record<string, Counters> = {}
  for (const [name, port, seed, counters] of [
    ["service", servicePort, serviceSeed, serviceCounters],
    ["baseline", baselinePort, baselineSeed, baselineCounters]
  ] as const) {
    counters.current = fresh()
    for (let index = 0; index < REQUESTS; index++) await call(scenario, port, seed, index)
    await new Promise((resolve) => setTimeout(resolve, 500)) // background refills finish
    measured[name] = counters.current
  }
  console.log(`\n== ${scenario}: per request (${REQUESTS} sequential requests), service / baseline`)
  for (const [label, type] of [["statements executed", "E"], ["simple queries (Q)", "Q"], ["round trips (Sync + Q)", "S"], ["parses (P)", "P"]] as const) {
    const pick = (counters: Counters) =>
      type === "S"
        ? (counters.messages.S ?? 0) + (counters.messages.Q ?? 0)
        : counters.messages[type] ?? 0
    console.log(`  ${label.padEnd(24)} ${String(perRequest(pick(measured.service))).padStart(6)} / ${perRequest(pick(measured.baseline))}`)
  }
  for (const name of ["service", "baseline"]) {
    console.log(`  ${name} statements:`)
    for (const [sql, count] of [...measured[name].statements].sort((a, b) => b[1] - a[1])) {
      console.log(`    ${String(perRequest(count)).padStart(5)}  ${short(sql)}`)
    }
  }
}

await Promise.all([stop(service), stop(baseline)])
serviceProxy.close()
baselineProxy.close()
process.exit(0)
