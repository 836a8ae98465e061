/**
 * Where the CPU goes while one target is under create load: the target process, PostgreSQL's
 * backends and the load generator, as shares of the machine, from /proc (clock ticks).
 *
 *   DATABASE_URL=... [CPU_PROFILE_DIR=/tmp/x] node --experimental-strip-types scripts/bench/cpu-share.ts [service|baseline] [create|detail|status|public-status]
 *
 * Also prints the target's CPU per request (ms), the figure compared to the baseline's.
 */
import autocannon from "autocannon"
import { execSync } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { benchServiceEnv, freePort, requestsFor, ROOT, type Scenario, type Seeded, startNode, stop, waitForHttp } from "./shared.ts"

const target = process.argv[2] ?? "service"
// CPU_PROFILE_DIR=/tmp/x: the target runs with --cpu-prof (the profile covers start-up, warm-up and the measured run)
const profile = process.env.CPU_PROFILE_DIR === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${process.env.CPU_PROFILE_DIR}`]
const scenario = (process.argv[3] ?? "create").replace("-", " ") as Scenario
const ticks = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")
  return Number(fields[11]) + Number(fields[12])
}
/** Ticks per thread name (main thread, the payment worker, V8's GC helpers, libuv's pool). */
const threadTicks = (pid: number) => {
  const byName = new Map<string, number>()
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8")
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"))
      const fields = stat.split(") ")[1].split(" ")
      byName.set(name, (byName.get(name) ?? 0) + Number(fields[11]) + Number(fields[12]))
    } catch { /* the thread ended */ }
  }
  return byName
}
const postgresPids = () => execSync("pgrep -x postgres || true").toString().trim().split("\n").filter(Boolean).map(Number)
const postgresTicks = () =>
  postgresPids().reduce((sum, pid) => {
    try {
      return sum + ticks(pid)
    } catch {
      return sum
    }
  }, 0)

const env = { ...process.env }
const seed = (await startNode(join(import.meta.dirname, "setup.ts"), ["--label", target, "--merchants", "50"], env, { label: "setup" }).firstJson) as unknown as Seeded
const port = await freePort()
const child = target === "service"
  ? startNode(join(ROOT, "src", "main.ts"), [], benchServiceEnv(env, port), { label: "service", nodeFlags: profile })
  : startNode(join(import.meta.dirname, "raw-server.ts"), [], { ...env, PORT: String(port), BENCH_API_RATE_LIMIT: "1000000" }, { label: "baseline", nodeFlags: profile })
await waitForHttp(`http://127.0.0.1:${port}/api/checkout/pay/${seed.invoiceIds[0]}/status`, child)
let connection = 0
const run = (seconds: number) =>
  autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: 50,
    duration: seconds,
    // The reads with the first key (their invoices are its merchant's), create rotating over every merchant's key.
    requests: scenario === "create"
      ? [{ method: "POST", path: "/api/checkout/invoices", headers: { "content-type": "application/json" }, body: JSON.stringify({ amountUsd: 25.5 }) }]
      : requestsFor(scenario, seed),
    setupClient: (client) => {
      if (scenario === "create") client.setHeaders({ "x-api-key": seed.apiKeys[connection++ % seed.apiKeys.length], "content-type": "application/json" })
    }
  })
await run(3)
const before = { threads: threadTicks(child.process.pid!), target: ticks(child.process.pid!), pg: postgresTicks(), self: process.cpuUsage(), at: performance.now() }
const result = await run(8)
const seconds = (performance.now() - before.at) / 1000
const self = process.cpuUsage(before.self)
const targetTicks = ticks(child.process.pid!) - before.target
const share = (delta: number) => `${Math.round(delta / 100 / seconds * 100)}% of one core`
console.log(`${target} ${scenario}: ${Math.round(result.requests.average)} req/s; CPU: ${target} ${share(targetTicks)}, ` +
  `PostgreSQL ${share(postgresTicks() - before.pg)}, load generator ${Math.round((self.user + self.system) / 1e4 / seconds)}% of one core`)
console.log(`  CPU per request: ${(targetTicks * 10 / result.requests.total).toFixed(3)} ms (${result.requests.total} requests)`)
const threads = threadTicks(child.process.pid!)
console.log(`  by thread: ${
  [...threads].map(([name, value]) => [name, value - (before.threads.get(name) ?? 0)] as const)
    .filter(([, value]) => value > 0).sort((a, b) => b[1] - a[1]).map(([name, value]) => `${name} ${share(value)}`).join(", ")
}`)
await stop(child)
process.exit(0)
