/**
 * `npm run bench [-- --quick] [--profile] [--only create,detail] [--merchants N] [--no-engine] [--no-watcher] [--no-footprint]`
 *
 * The service next to a raw baseline, A-B-A-B, on the same machine:
 * 1. setup (scripts/bench/setup.ts, the project's own layers): migrate, and create one bench
 *    merchant per target (5 enabled methods, fresh zpub, API key, invoices to read);
 * 2. the service under test as a child process: src/main.ts (makeApp, the real HTTP server) on a
 *    free port, CHECKOUT_ENV=test, CHECKOUT_DEMO=false, CHECKOUT_ROLE=api, CHECKOUT_API_RATE_LIMIT
 *    at its maximum (the limiter stays active: it is part of the cost of a request);
 * 3. the raw baseline as a child process (scripts/bench/raw-server.ts: node:http + pg, same SQL);
 * 4. autocannon, 50 connections, per scenario: a warm-up of each, then service, baseline, service,
 *    baseline for DURATION seconds each; the service's resident memory after every run;
 * 5. the lifecycle engine in process (scripts/bench/engine.ts), evidence to webhook and the whole
 *    lifecycle of many invoices with every webhook delivered (scripts/bench/webhooks.ts), and the EVM watcher's poll with 100
 *    and 100,000 open invoices against a real anvil node (scripts/bench/watcher.ts), and the bitcoin
 *    watcher's block with as many against the Esplora simulator (scripts/bench/bitcoin-watcher.ts);
 * 6. a table on stdout, and the JSON in bench/results/<timestamp>.json and bench/results/latest.json.
 *
 * DATABASE_URL set: every process uses that PostgreSQL (give the bench a database of its own:
 * `createdb -h 127.0.0.1 -U postgres checkout_bench`). Unset: the service and the baseline each
 * get an embedded PGlite data directory of their own under the OS temp directory (PGlite serves
 * one process at a time), and the engine an in-memory one.
 */
import autocannon from "autocannon"
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { cpus, totalmem, tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { type PacedRun, pacedLoad } from "./paced.ts"
import {
  benchServiceEnv,
  type Child,
  freePort,
  heapAfterGcMb,
  pacedRequestsFor,
  requestsFor,
  ROOT,
  rssMb,
  type Scenario,
  type Seeded,
  startNode,
  stop,
  waitForHttp
} from "./shared.ts"
import { topSelfTime } from "./profile-top.ts"

const { values: flags } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    profile: { type: "boolean", default: false },
    only: { type: "string" },
    merchants: { type: "string", default: "50" },
    "no-engine": { type: "boolean", default: false },
    "no-watcher": { type: "boolean", default: false },
    "no-footprint": { type: "boolean", default: false }
  }
})
const quick = flags.quick
const DURATION = quick ? 3 : 10
const WARMUP = quick ? 1 : 3
/** The paced warm-up before each paced window: the service's tail settles after 5–10 s of steady load. */
const PACED_WARMUP = quick ? 1 : 10
const CONNECTIONS = 50
const ROUNDS = 2
const RATE_LIMIT = "1000000"
// Creates spread over this many merchants, connection i on merchant i % MERCHANTS (reads use the
// first one). One merchant's bitcoin pool (20 addresses, refilled in the background below 10)
// cannot keep up with 50 concurrent creates: invoices then go out without the bitcoin option. With
// one merchant per connection every create carries its 5 options; `--merchants 1` shows the burst.
const MERCHANTS = Math.max(1, Number(flags.merchants))

const ALL: ReadonlyArray<Scenario> = ["create", "detail", "status", "public status"]
const scenarios = flags.only === undefined
  ? ALL
  : flags.only.split(",").map((name) => name.trim().replace("-", " ") as Scenario).filter((name) => ALL.includes(name))

const databaseUrl = process.env.DATABASE_URL === "" ? undefined : process.env.DATABASE_URL
const databaseKind = databaseUrl === undefined
  ? "embedded PGlite (one data directory per process, served over loopback, pool of 1)"
  : `PostgreSQL server (DATABASE_URL, ${new URL(databaseUrl).host}${new URL(databaseUrl).pathname}, pool of 10 per process)`
const started = new Date()
const stamp = started.toISOString().replaceAll(":", "-")
const log = (line: string) => console.log(line)

// ---- machine

const machine = {
  cores: cpus().length,
  cpu: cpus()[0]?.model ?? "unknown",
  memoryGiB: Math.round(totalmem() / 2 ** 30),
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
  database: databaseKind
}
log(`bench${quick ? " (quick)" : ""}: ${DURATION} s per run after a ${WARMUP} s warm-up, ${CONNECTIONS} connections, ` +
  `A-B-A-B (service, baseline, service, baseline)`)
log(`machine: ${machine.cores} cores (${machine.cpu}), ${machine.memoryGiB} GiB, Node ${machine.node}; database: ${databaseKind}`)

// ---- setup

const baseEnv = { ...process.env, DATABASE_URL: databaseUrl }
const scratch = databaseUrl === undefined ? mkdtempSync(join(tmpdir(), "checkout-bench-")) : undefined
const dataDir = (label: string) => (scratch === undefined ? undefined : join(scratch, label))

const setup = async (label: string): Promise<Seeded> => {
  const dir = dataDir(label)
  const args = ["--label", label, "--merchants", String(MERCHANTS), ...(dir === undefined ? [] : ["--data-dir", dir])]
  const child = startNode(join(import.meta.dirname, "setup.ts"), args, baseEnv, { label: `setup ${label}` })
  return (await child.firstJson) as unknown as Seeded
}
const setupStarted = performance.now()
// One PostgreSQL: one after the other (the first migrates). Two PGlite directories: side by side.
const [serviceSeed, baselineSeed] = databaseUrl === undefined
  ? await Promise.all([setup("service"), setup("baseline")])
  : [await setup("service"), await setup("baseline")]
log(`setup: ${MERCHANTS === 1 ? "one bench merchant" : `${MERCHANTS} bench merchants`} per target (5 enabled methods, ` +
  `a fresh zpub and an API key each; ${serviceSeed.invoiceIds.length} invoices to read) in ` +
  `${((performance.now() - setupStarted) / 1000).toFixed(1)} s`)

// ---- the two servers

const profileDir = flags.profile ? join(tmpdir(), `checkout-bench-profiles-${stamp}`) : undefined
const profileFlags = (name: string) => (profileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${join(profileDir, name)}`])

interface Target {
  readonly name: "service" | "baseline"
  readonly child: Child
  readonly base: string
  readonly seed: Seeded
}

const startService = async (): Promise<Target> => {
  const port = await freePort()
  // The limiter's store is the database, as in the baseline; the BTC price is the fixed test rate.
  const env = benchServiceEnv(baseEnv, port, { CHECKOUT_API_RATE_LIMIT: RATE_LIMIT, CHECKOUT_DATA_DIR: dataDir("service") ?? "memory://" })
  // --inspect (no session attached while loading) lets the harness force a GC and read the live heap between runs.
  const child = startNode(join(ROOT, "src", "main.ts"), [], env, {
    label: "service",
    // SERVICE_NODE_FLAGS: V8 or Node flags to try on the service alone (diagnostics).
    nodeFlags: [...profileFlags("service"), "--inspect=127.0.0.1:0", ...(process.env.SERVICE_NODE_FLAGS ?? "").split(" ").filter(Boolean)]
  })
  const base = `http://127.0.0.1:${port}`
  await waitForHttp(`${base}/api/checkout/pay/${serviceSeed.invoiceIds[0]}/status`, child)
  return { name: "service", child, base, seed: serviceSeed }
}

const startBaseline = async (): Promise<Target> => {
  const port = await freePort()
  const env = { ...baseEnv, PORT: String(port), BENCH_API_RATE_LIMIT: RATE_LIMIT, BENCH_DATA_DIR: dataDir("baseline") }
  const child = startNode(join(import.meta.dirname, "raw-server.ts"), [], env, { label: "baseline", nodeFlags: profileFlags("baseline") })
  const reported = await child.firstJson
  return { name: "baseline", child, base: `http://127.0.0.1:${reported.port}`, seed: baselineSeed }
}

const service = await startService()
const baseline = await startBaseline()
log(`service: pid ${service.child.process.pid} (src/main.ts) at ${service.base}; baseline: pid ${baseline.child.process.pid} at ${baseline.base}`)

// ---- requests

/** One request per scenario before any load: status codes and sizes, and 5 options on create. */
const probe = async (target: Target) => {
  const sizes: Record<string, number> = {}
  for (const scenario of scenarios) {
    const request = requestsFor(scenario, target.seed)[0]
    const response = await fetch(`${target.base}${request.path}`, {
      method: request.method,
      headers: request.headers,
      ...("body" in request ? { body: request.body } : {})
    })
    const text = await response.text()
    const expected = scenario === "create" ? 201 : 200
    if (response.status !== expected) throw new Error(`${target.name} ${scenario}: ${response.status} ${text.slice(0, 300)}`)
    if (scenario === "create") {
      const options = (JSON.parse(text) as { paymentOptions: Array<unknown> }).paymentOptions.length
      if (options !== 5) throw new Error(`${target.name} create answered ${options} payment options instead of 5`)
    }
    sizes[scenario] = Buffer.byteLength(text)
  }
  return sizes
}
const bodyBytes = { service: await probe(service), baseline: await probe(baseline) }
log(`response bytes (service / baseline): ${scenarios.map((s) => `${s} ${bodyBytes.service[s]} / ${bodyBytes.baseline[s]}`).join(", ")}`)

interface Run {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly requests: number
  readonly errors: number
  readonly timeouts: number
  readonly non2xx: number
  /** Answers by HTTP status. */
  readonly statusCodes: Record<string, number>
  /** create only: how many answers carried how many payment options. */
  readonly optionsPerInvoice?: Record<string, number>
  /** create only: the body of the first answer that was not 201. */
  readonly firstFailure?: string
}

const load = async (scenario: Scenario, target: Target, seconds: number): Promise<Run> => {
  const options: Record<string, number> = {}
  let firstFailure: string | undefined
  const requests = requestsFor(scenario, target.seed).map((request) =>
    scenario !== "create" ? request : {
      ...request,
      onResponse: (status: number, body: string) => {
        if (status !== 201) {
          firstFailure ??= `${status} ${body.slice(0, 300)}`
          return
        }
        try {
          const count = String((JSON.parse(body) as { paymentOptions: Array<unknown> }).paymentOptions.length)
          options[count] = (options[count] ?? 0) + 1
        } catch {
          options.unreadable = (options.unreadable ?? 0) + 1
        }
      }
    }
  )
  // With --merchants N, connection i creates for merchant i % N (its own key, its own bitcoin pool).
  let connection = 0
  const keys = target.seed.apiKeys
  const setupClient = scenario === "create" && keys.length > 1
    ? (client: autocannon.Client) => client.setHeaders({ "x-api-key": keys[connection++ % keys.length], "content-type": "application/json" })
    : undefined
  const result = await autocannon({
    url: target.base,
    connections: CONNECTIONS,
    duration: seconds,
    requests,
    ...(setupClient === undefined ? {} : { setupClient })
  })
  return {
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, stats]) => [code, stats.count ?? 0])),
    ...(scenario === "create" ? { optionsPerInvoice: options } : {}),
    ...(firstFailure === undefined ? {} : { firstFailure })
  }
}

/** The scenario's requests at a steady rate (open loop); create rotates over the merchants' keys like `load`. */
const paced = (scenario: Scenario, target: Target, rate: number) =>
  pacedLoad(target.base, pacedRequestsFor(scenario, target.seed), { rate, seconds: DURATION, connections: CONNECTIONS })

interface Aggregate {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly errors: number
  readonly non2xx: number
  /** create only: answers by number of payment options, over the measured runs. */
  readonly optionsPerInvoice?: Record<string, number>
  readonly runs: ReadonlyArray<Run>
}
/** req/s and p50: the mean of the runs; p99: the worst run; errors and non-2xx: summed. */
const aggregate = (runs: ReadonlyArray<Run>): Aggregate => ({
  rps: Math.round(runs.reduce((sum, run) => sum + run.rps, 0) / runs.length),
  p50: Number((runs.reduce((sum, run) => sum + run.p50, 0) / runs.length).toFixed(1)),
  p99: Math.max(...runs.map((run) => run.p99)),
  errors: runs.reduce((sum, run) => sum + run.errors + run.timeouts, 0),
  non2xx: runs.reduce((sum, run) => sum + run.non2xx, 0),
  ...(runs[0]?.optionsPerInvoice === undefined ? {} : {
    optionsPerInvoice: runs.reduce<Record<string, number>>((sum, run) => {
      for (const [count, answers] of Object.entries(run.optionsPerInvoice ?? {})) sum[count] = (sum[count] ?? 0) + answers
      return sum
    }, {})
  }),
  runs
})
const fiveOptionShare = (row: Aggregate) => {
  const all = Object.values(row.optionsPerInvoice ?? {}).reduce((sum, count) => sum + count, 0)
  return all === 0 ? 0 : Math.round((1000 * (row.optionsPerInvoice?.["5"] ?? 0)) / all) / 10
}

const inspectorUrl = await Promise.race([service.child.inspector, new Promise<undefined>((resolve) => setTimeout(resolve, 5000))])
interface MemorySample {
  readonly after: string
  readonly serviceMb: number
  readonly baselineMb: number
  /** The service's live JS heap right after a forced full GC (null when the inspector is unavailable). */
  readonly serviceHeapAfterGcMb: number | null
}
const memory: Array<MemorySample> = []
/**
 * RSS (as the load left it); with `gc`, then a forced full GC and the live heap. The GC is forced
 * only after a scenario's last round, never right before a measured run (it would shrink the heap
 * that the next run then has to grow again).
 */
const sample = async (after: string, gc: boolean) => {
  const serviceMb = rssMb(service.child.process.pid!)
  const baselineMb = rssMb(baseline.child.process.pid!)
  const heap = !gc || inspectorUrl === undefined ? null : await heapAfterGcMb(inspectorUrl).catch(() => null)
  const entry = { after, serviceMb, baselineMb, serviceHeapAfterGcMb: heap }
  memory.push(entry)
  log(`    RSS after ${after}: service ${serviceMb} MB${heap === null ? "" : ` (live heap after a forced GC: ${heap} MB)`}, baseline ${baselineMb} MB`)
}

// ---- A-B-A-B, then the memory rounds

const MEMORY_ROUNDS = quick ? 3 : 5
const MEMORY_SECONDS = quick ? 1 : 3
const memoryRounds: Array<{ readonly round: number; readonly rssMb: number; readonly heapMb: number | null }> = []

await sample("start", true)
interface Paced {
  /** Requests per second offered to each server: half the baseline's measured throughput. */
  readonly rate: number
  /** A-B-A-B: service, baseline, service, baseline at that rate. */
  readonly pairs: ReadonlyArray<{ readonly service: PacedRun; readonly baseline: PacedRun }>
  /** Service over baseline, the median (of two: the mean) of the pairs' ratios. */
  readonly p50Ratio: number
  readonly p99Ratio: number
  readonly service: PacedRun
  readonly baseline: PacedRun
}

const medianOfPairs = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return Number((sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2).toFixed(2))
}
const results: Record<string, { service: Aggregate; baseline: Aggregate; ratio: number; paced: Paced }> = {}
try {
  for (const scenario of scenarios) {
    log(`  ${scenario}: warm-up`)
    await load(scenario, service, WARMUP)
    await load(scenario, baseline, WARMUP)
    await sample(`${scenario} warm-up`, false)
    const runs: Record<"service" | "baseline", Array<Run>> = { service: [], baseline: [] }
    for (let round = 1; round <= ROUNDS; round++) {
      for (const target of [service, baseline]) {
        const run = await load(scenario, target, DURATION)
        runs[target.name].push(run)
        log(`  ${scenario} ${target.name} round ${round}: ${run.rps} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms, ` +
          `errors ${run.errors + run.timeouts}, non-2xx ${run.non2xx}` +
          (run.optionsPerInvoice === undefined ? "" : `, options per invoice ${JSON.stringify(run.optionsPerInvoice)}`) +
          (run.non2xx + run.errors + run.timeouts === 0 ? "" : `, statuses ${JSON.stringify(run.statusCodes)}`) +
          (run.firstFailure === undefined ? "" : `, first failure: ${run.firstFailure}`))
      }
      await sample(`${scenario} round ${round}`, round === ROUNDS)
    }
    const measured = { service: aggregate(runs.service), baseline: aggregate(runs.baseline) }
    // Latency at ordinary load: the same 50 connections, paced at half the baseline's throughput,
    // service and baseline alternating twice (A-B-A-B) so that a slow moment of the host hits both.
    const rate = Math.max(1, Math.round(measured.baseline.rps / 2))
    // Each window is preceded by a paced warm-up of the same server at the same rate: the first
    // seconds after a phase change (saturation ending, the forced GC of the memory sample, or the
    // idle spell while the other server had its window) are not ordinary load.
    const warmedUp = (target: Target) =>
      pacedLoad(target.base, pacedRequestsFor(scenario, target.seed), { rate, seconds: PACED_WARMUP, connections: CONNECTIONS }).then(() => paced(scenario, target, rate))
    const pairs: Array<{ service: PacedRun; baseline: PacedRun }> = []
    for (let pair = 1; pair <= 2; pair++) {
      const run = { service: await warmedUp(service), baseline: await warmedUp(baseline) }
      pairs.push(run)
      log(`  ${scenario} paced at ${rate} req/s, pair ${pair}: service p50 ${run.service.p50} ms, p99 ${run.service.p99} ms; ` +
        `baseline p50 ${run.baseline.p50} ms, p99 ${run.baseline.p99} ms`)
    }
    const ratioOf = (pick: (run: PacedRun) => number) => medianOfPairs(pairs.map((run) => pick(run.service) / Math.max(pick(run.baseline), 0.1)))
    const pacedRuns: Paced = {
      rate,
      pairs,
      p50Ratio: ratioOf((run) => run.p50),
      p99Ratio: ratioOf((run) => run.p99),
      service: pairs[pairs.length - 1].service,
      baseline: pairs[pairs.length - 1].baseline
    }
    results[scenario] = { ...measured, ratio: Number((measured.service.rps / measured.baseline.rps).toFixed(2)), paced: pacedRuns }
  }
  // Repeated rounds of the whole mix on the service; after each, a forced full GC, then RSS and the live heap.
  log(`  memory: ${MEMORY_ROUNDS} rounds of ${scenarios.join(", ")} (${MEMORY_SECONDS} s each)`)
  for (let round = 1; round <= MEMORY_ROUNDS; round++) {
    for (const scenario of scenarios) await load(scenario, service, MEMORY_SECONDS)
    const heapMb = inspectorUrl === undefined ? null : await heapAfterGcMb(inspectorUrl).catch(() => null)
    const entry = { round, rssMb: rssMb(service.child.process.pid!), heapMb }
    memoryRounds.push(entry)
    log(`    memory round ${round}: RSS ${entry.rssMb} MB after a forced GC, live heap ${heapMb ?? "n/a"} MB`)
  }
} finally {
  await Promise.all([stop(service.child), stop(baseline.child)])
}

// ---- lifecycle engine

let engine: Record<string, unknown> | undefined
if (!flags["no-engine"]) {
  log(`  lifecycle engine (${quick ? "2k events over 200 invoices, 2k due" : "10k events over 1k invoices, 10k due"}) ...`)
  const child = startNode(join(import.meta.dirname, "engine.ts"), quick ? ["--quick"] : [], baseEnv, { label: "engine" })
  engine = await child.firstJson
  await child.exited
}
let webhooks: Record<string, any> | undefined
if (!flags["no-engine"]) {
  log(`  evidence to webhook at 200 events/s, and ${quick ? "2,000" : "10,000"} invoices through their whole lifecycle with every webhook ...`)
  const child = startNode(join(import.meta.dirname, "webhooks.ts"), quick ? ["--quick"] : [], baseEnv, { label: "webhooks" })
  webhooks = await child.firstJson
  await child.exited
}
// ---- promotion per scavenge under each paced load, and the idle footprint (round 2, items 2 and 5)

const promotion: Array<Record<string, any>> = []
for (const [scenario, row] of Object.entries(results)) {
  log(`  GC under a paced ${scenario} load at ${row.paced.rate} req/s (a fresh service with --trace-gc-nvp) ...`)
  const child = startNode(join(import.meta.dirname, "paced-tail.ts"), [scenario.replace(" ", "-"), String(row.paced.rate), quick ? "4" : "8", "--json"], baseEnv, {
    label: `gc ${scenario}`
  })
  promotion.push(await child.firstJson)
  await child.exited
}
let footprint: Record<string, any> | undefined
if (!flags["no-footprint"]) {
  log("  idle footprint and time to ready (embedded first and warm start, PGlite alone, and the server with DATABASE_URL) ...")
  const child = startNode(join(import.meta.dirname, "footprint.ts"), ["--json"], baseEnv, { label: "footprint" })
  footprint = await child.firstJson
  await child.exited
}
let watcher: Record<string, any> | undefined
if (!flags["no-watcher"]) {
  log("  EVM watcher: one poll with 100 and with 100,000 open invoices (anvil) ...")
  const child = startNode(join(import.meta.dirname, "watcher.ts"), quick ? ["--quick"] : [], baseEnv, { label: "watcher" })
  watcher = await child.firstJson
  await child.exited
}
let bitcoinWatcher: Record<string, any> | undefined
if (!flags["no-watcher"]) {
  log("  bitcoin watcher: one block with 100 and with 100,000 open invoices (Esplora simulator) ...")
  const child = startNode(join(import.meta.dirname, "bitcoin-watcher.ts"), quick ? ["--quick"] : [], baseEnv, { label: "bitcoin-watcher" })
  bitcoinWatcher = await child.firstJson
  await child.exited
}
if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true })

// ---- memory verdict: the same workload repeated must not leave the process bigger

// Round 1 grows the process to its working size (JIT code, pools, heap spaces V8 keeps); every
// later round repeats the same work, so RSS and the live heap after a forced GC must stay level:
// the largest of rounds 2..N may exceed round 2 by at most max(10 MB, 5%) of RSS and max(3 MB, 5%)
// of heap.
const settled = memoryRounds.slice(1)
const rssBase = settled[0]?.rssMb ?? 0
const rssGrowthMb = settled.length < 2 ? 0 : Math.max(...settled.map((entry) => entry.rssMb)) - rssBase
const heaps = settled.map((entry) => entry.heapMb).filter((heap): heap is number => heap !== null)
const heapGrowthMb = heaps.length < 2 ? null : Number((Math.max(...heaps) - heaps[0]).toFixed(1))
const rssGrowing = rssGrowthMb > Math.max(10, 0.05 * rssBase)
const heapGrowing = heapGrowthMb !== null && heapGrowthMb > Math.max(3, 0.05 * heaps[0])
const leak = settled.length < 2 || rssGrowing || heapGrowing
const serviceSeries = memory.map((entry) => entry.serviceMb)
const signed = (value: number) => `${value >= 0 ? "+" : ""}${Number(value.toFixed(1))}`
const memoryVerdict = settled.length < 2
  ? "not measured (fewer than 3 memory rounds)"
  : `${leak ? "GROWING (check for a leak)" : "no growth"} across ${MEMORY_ROUNDS} repeated rounds of the mix: ` +
    `RSS after a forced GC ${memoryRounds.map((entry) => entry.rssMb).join(", ")} MB (rounds 2..${MEMORY_ROUNDS}: ${signed(rssGrowthMb)} MB, ` +
    `tolerance max(10 MB, 5%)); live heap ${memoryRounds.map((entry) => entry.heapMb ?? "n/a").join(", ")} MB` +
    (heapGrowthMb === null ? "" : ` (${signed(heapGrowthMb)} MB, tolerance max(3 MB, 5%))`)

// ---- report

const pad = (value: unknown, width: number) => String(value).padStart(width)
const padEnd = (value: unknown, width: number) => String(value).padEnd(width)
log("")
log(`| scenario       | service req/s | p50 ms | p99 ms | baseline req/s | p50 ms | p99 ms | ratio | errors / non-2xx |`)
log(`|----------------|--------------:|-------:|-------:|---------------:|-------:|-------:|------:|-----------------:|`)
for (const [scenario, row] of Object.entries(results)) {
  log(`| ${padEnd(scenario === "create" ? "create (5 opt.)" : scenario, 14)} | ${pad(row.service.rps, 13)} | ${pad(row.service.p50, 6)} | ${pad(row.service.p99, 6)} | ` +
    `${pad(row.baseline.rps, 14)} | ${pad(row.baseline.p50, 6)} | ${pad(row.baseline.p99, 6)} | ${pad(row.ratio.toFixed(2), 5)} | ` +
    `${pad(`${row.service.errors + row.baseline.errors} / ${row.service.non2xx + row.baseline.non2xx}`, 16)} |`)
}
if (results.create !== undefined) {
  const share = { service: fiveOptionShare(results.create.service), baseline: fiveOptionShare(results.create.baseline) }
  log(`create answers with all 5 payment options: service ${share.service}%, baseline ${share.baseline}%` +
    (share.service < 100 || share.baseline < 100
      ? " (the others have 4: the merchant's bitcoin address pool, 20 addresses refilled in the background below 10, ran dry" +
        (MERCHANTS < CONNECTIONS ? `; with ${MERCHANTS} merchant(s) for ${CONNECTIONS} connections)` : ")")
      : ""))
}
log("")
if (engine !== undefined) {
  log(`lifecycle: ${engine.evidenceEventsPerSecond} evidence events/s through PaymentEvidence.record (${engine.events} events over ` +
    `${engine.invoices} invoices, concurrency ${engine.concurrency}, p50 ${engine.evidenceP50Ms} ms, p99 ${engine.evidenceP99Ms} ms; ` +
    `statuses after: ${JSON.stringify(engine.statusesAfter)})`)
  log(`deadline: swept ${engine.swept} due invoices in ${engine.sweepSeconds} s (${engine.sweptPerSecond}/s) with InvoiceExpiry.expire()` +
    (Number(engine.alreadyDueSweptFirst) > 0 ? `; ${engine.alreadyDueSweptFirst} already-due invoices were swept first, untimed` : ""))
}
if (webhooks !== undefined) {
  log(`webhooks (${webhooks.database}): evidence to signed webhook at ${webhooks.latency.rate}/s p50 ${webhooks.latency.p50Ms} ms, ` +
    `p99 ${webhooks.latency.p99Ms} ms; ${webhooks.volume.invoices} invoices created ${webhooks.volume.createdSeconds} s, paid and confirmed ` +
    `${webhooks.volume.paidSeconds} s, all ${webhooks.volume.webhooksDelivered}/${webhooks.volume.webhooksExpected} webhooks delivered ${webhooks.volume.totalSeconds} s`)
}
if (bitcoinWatcher !== undefined) {
  log(`bitcoin watcher: a block of ${bitcoinWatcher.blockTransactions} transactions (${bitcoinWatcher.paidPerBlock} to watched addresses) takes ` +
    `${bitcoinWatcher.few.pollMsMedian} ms with ${bitcoinWatcher.few.openInvoices} open invoices and ${bitcoinWatcher.many.pollMsMedian} ms with ` +
    `${bitcoinWatcher.many.openInvoices} (median of ${bitcoinWatcher.rounds}; ratio ${bitcoinWatcher.ratio})`)
}
if (watcher !== undefined) {
  log(`watcher: a poll of ${watcher.transfersPerPoll} new blocks (${watcher.matchedPerPoll} transfers to watched addresses) takes ` +
    `${watcher.few.pollMsMedian} ms with ${watcher.few.openInvoices} open invoices and ${watcher.many.pollMsMedian} ms with ` +
    `${watcher.many.openInvoices} (median of ${watcher.rounds}; ratio ${watcher.ratio}); the index's one-time load at start: ` +
    `${watcher.few.firstPollMs} ms and ${watcher.many.firstPollMs} ms`)
}
for (const [scenario, row] of Object.entries(results)) {
  log(`paced at half the baseline's throughput (${row.paced.rate} req/s, ${CONNECTIONS} connections, A-B-A-B): ${scenario} p50 / p99 ` +
    row.paced.pairs.map((pair, index) => `pair ${index + 1} service ${pair.service.p50} / ${pair.service.p99} ms, baseline ${pair.baseline.p50} / ${pair.baseline.p99} ms`).join(
      "; "
    ) +
    `; ratios p50 ${row.paced.p50Ratio}, p99 ${row.paced.p99Ratio}`)
}
log(`service RSS (MB) after start, then after each scenario's warm-up and rounds (no GC forced): ${serviceSeries.join(", ")}`)
log(`memory: ${memoryVerdict}`)
for (const run of promotion) {
  log(`GC under a paced ${run.scenario} load at ${run.rate} req/s (fresh service, ${run.seconds} s): p50 ${run.p50Ms} / p99 ${run.p99Ms} ms, ` +
    `${run.scavenges} scavenges promoting ${run.promotedMbPerScavenge} MB each, ${run.fullGcs} full GCs`)
}
if (footprint !== undefined) {
  const line = (figures: Record<string, any>) => `ready in ${figures.readyMs} ms, idle ${figures.mb} MB (${figures.afterGcMb} MB after a full GC, live heap ${figures.heapMb} MB)`
  log(`footprint: embedded first start ${line(footprint.embeddedFirst)}; warm start ${line(footprint.embeddedWarm)}; PGlite alone ${footprint.pgliteAloneMb} MB ` +
    `(${footprint.pgliteAloneFirstStartMb} MB on a fresh data directory)` +
    (footprint.server === undefined ? "" : `; PostgreSQL server ${line(footprint.server)}`))
}

// The issue's budget (meant for a PostgreSQL server, 50 connections, this 2-core machine).
const budget: Array<{ readonly check: string; readonly pass: boolean }> = []
for (const [scenario, row] of Object.entries(results)) {
  const floor = scenario === "create" ? 0.6 : 0.7
  budget.push({ check: `${scenario}: ratio ${row.ratio.toFixed(2)} >= ${floor}`, pass: row.ratio >= floor })
  // Round 2's budget: latency at a fixed offered rate next to the baseline (the saturation p99 line is gone:
  // closed-loop latency is connections over throughput, which no server meets at 25 ms on two cores).
  const pacedClean = row.paced.pairs.every((pair) => pair.service.non2xx + pair.service.errors === 0)
  budget.push({
    check: `${scenario}: paced at ${row.paced.rate} req/s, service p50 ${row.paced.p50Ratio}x the baseline's <= 1.3x`,
    pass: row.paced.p50Ratio <= 1.3 && pacedClean
  })
  budget.push({
    check: `${scenario}: paced at ${row.paced.rate} req/s, service p99 ${row.paced.p99Ratio}x the baseline's <= 1.5x`,
    pass: row.paced.p99Ratio <= 1.5 && pacedClean
  })
  budget.push({ check: `${scenario}: 0 errors and 0 non-2xx`, pass: row.service.errors + row.service.non2xx + row.baseline.errors + row.baseline.non2xx === 0 })
}
if (engine !== undefined) {
  budget.push({ check: `evidence ${engine.evidenceEventsPerSecond} events/s >= 1000`, pass: Number(engine.evidenceEventsPerSecond) >= 1000 })
}
if (webhooks !== undefined) {
  budget.push({ check: `evidence to webhook p99 ${webhooks.latency.p99Ms} ms at 200 events/s < 1000 ms`, pass: webhooks.latency.p99Ms < 1000 })
  budget.push({
    check: `${webhooks.volume.invoices} invoices created, paid, confirmed and every webhook delivered in ${webhooks.volume.totalSeconds} s < 60 s`,
    pass: webhooks.volume.totalSeconds < 60 && webhooks.volume.webhooksDelivered === webhooks.volume.webhooksExpected && webhooks.badSignatures === 0
  })
}
if (bitcoinWatcher !== undefined) {
  budget.push({
    check: `bitcoin block with 100,000 open invoices ${bitcoinWatcher.ratio}x the block with 100 <= 1.2x`,
    pass: Number(bitcoinWatcher.ratio) <= 1.2
  })
}
if (watcher !== undefined) {
  budget.push({ check: `watcher poll with 100,000 open invoices ${watcher.ratio}x the poll with 100 <= 1.2x`, pass: Number(watcher.ratio) <= 1.2 })
}
for (const run of promotion) {
  budget.push({
    check: `${run.scenario}: paced at ${run.rate} req/s, ${run.promotedMbPerScavenge} MB promoted per scavenge (${run.scavenges} scavenges) < 0.5 MB`,
    pass: run.promotedMbPerScavenge < 0.5
  })
}
if (footprint !== undefined) {
  const warm = footprint.embeddedWarm
  budget.push({
    check: `embedded database: idle ${warm.mb} MB, ${warm.mb - footprint.pgliteAloneMb} MB over PGlite alone (${footprint.pgliteAloneMb} MB) < 150 MB`,
    pass: warm.mb - footprint.pgliteAloneMb < 150
  })
  budget.push({ check: `embedded database, warm data directory: ready in ${warm.readyMs} ms < 3000 ms`, pass: warm.readyMs < 3000 })
  if (footprint.server !== undefined) {
    budget.push({ check: `PostgreSQL server: idle ${footprint.server.mb} MB < 150 MB`, pass: footprint.server.mb < 150 })
  }
}
budget.push({ check: `no memory growth across ${MEMORY_ROUNDS} repeated rounds (RSS and live heap after a forced GC)`, pass: !leak })
log(`budget (issues 7 and 25${databaseUrl === undefined ? "; it is set for a PostgreSQL server, shown here for reference" : ""}): ` +
  `${budget.filter((entry) => entry.pass).length}/${budget.length} met`)
for (const entry of budget) log(`  ${entry.pass ? "PASS" : "FAIL"}  ${entry.check}`)

const report = {
  date: started.toISOString(),
  quick,
  profiled: profileDir !== undefined,
  scenarios,
  durationSeconds: DURATION,
  warmupSeconds: WARMUP,
  pacedWarmupSeconds: PACED_WARMUP,
  connections: CONNECTIONS,
  merchantsForCreate: MERCHANTS,
  rounds: ROUNDS,
  order: "per scenario: warm-up service, warm-up baseline, then service, baseline, service, baseline",
  machine,
  serviceConfig: {
    entry: "src/main.ts",
    CHECKOUT_ENV: "test",
    CHECKOUT_DEMO: "false",
    CHECKOUT_ROLE: "api",
    CHECKOUT_API_RATE_LIMIT: RATE_LIMIT,
    rateLimitStore: "the database (REDIS_URL cleared)",
    btcPrice: "fixed test rate (CHECKOUT_PRICE_URL cleared)"
  },
  responseBytes: bodyBytes,
  results,
  lifecycle: engine ?? null,
  watcher: watcher ?? null,
  bitcoinWatcher: bitcoinWatcher ?? null,
  webhooks: webhooks ?? null,
  promotion,
  footprint: footprint ?? null,
  memory: { samples: memory, rounds: memoryRounds, rssGrowthMb, liveHeapGrowthMb: heapGrowthMb, verdict: memoryVerdict },
  budget
}
const directory = join(ROOT, "bench", "results")
mkdirSync(directory, { recursive: true })
const file = join(directory, `${stamp}.json`)
writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
// A quick, partial or profiled run is kept under its timestamp only.
const complete = !quick && profileDir === undefined && flags.only === undefined && engine !== undefined
if (complete) writeFileSync(join(directory, "latest.json"), `${JSON.stringify(report, null, 2)}\n`)
log(`written: bench/results/${stamp}.json${complete ? " and bench/results/latest.json" : " (quick, partial or profiled run: latest.json left as it was)"}`)

if (profileDir !== undefined) {
  for (const name of ["service", "baseline"]) {
    const dir = join(profileDir, name)
    for (const profile of readdirSync(dir).filter((entry) => entry.endsWith(".cpuprofile"))) {
      log(`\n${name} CPU profile ${join(dir, profile)}: top self time`)
      for (const line of topSelfTime(join(dir, profile), 25)) log(`  ${line}`)
    }
  }
}
process.exit(0)
