/**
 * npm run bench [-- --quick]: the service and a raw node:http + pg baseline side by side (A-B-A-B,
 * 50 connections), the lifecycle engine in process, and the service's resident memory per round.
 * Uses DATABASE_URL when set (each process gets the same server), else embedded PGlite databases.
 */
import autocannon from "autocannon"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { cpus, totalmem } from "node:os"
import { join } from "node:path"

const quick = process.argv.includes("--quick")
const DURATION = quick ? 3 : 10
const WARMUP = quick ? 1 : 3
const CONNECTIONS = 50
const root = join(import.meta.dirname, "..", "..")
const nodeArgs = ["--experimental-strip-types", "--disable-warning=ExperimentalWarning"]

interface Target { readonly port: number; readonly apiKey: string; readonly invoiceId: string; readonly child: ChildProcess }

const start = (script: string): Promise<Target> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, join(import.meta.dirname, script)], {
      cwd: root,
      env: { ...process.env, CHECKOUT_ENV: "test", CHECKOUT_ROLE: "api" },
      stdio: ["ignore", "pipe", "inherit"]
    })
    let buffer = ""
    child.stdout!.on("data", (chunk: Buffer) => {
      buffer += chunk.toString()
      const line = buffer.split("\n").find((candidate) => candidate.startsWith("{"))
      if (line !== undefined) resolve({ ...JSON.parse(line), child })
    })
    child.on("exit", (code) => reject(new Error(`${script} exited with ${code}`)))
  })

const rssMb = (pid: number) => {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  return match === null ? 0 : Math.round(Number(match[1]) / 1024)
}

type Scenario = "create" | "detail" | "status" | "public status"
const SCENARIOS: ReadonlyArray<Scenario> = ["create", "detail", "status", "public status"]

const request = (scenario: Scenario, target: Target) => {
  const base = `http://127.0.0.1:${target.port}`
  const auth = { "x-api-key": target.apiKey }
  switch (scenario) {
    case "create":
      return { url: `${base}/api/checkout/invoices`, method: "POST" as const, headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ amountUsd: 25.5 }) }
    case "detail":
      return { url: `${base}/api/checkout/invoices/${target.invoiceId}`, method: "GET" as const, headers: auth }
    case "status":
      return { url: `${base}/api/checkout/invoices/${target.invoiceId}/status`, method: "GET" as const, headers: auth }
    case "public status":
      return { url: `${base}/api/checkout/pay/${target.invoiceId}/status`, method: "GET" as const, headers: {} }
  }
}

interface Measured { readonly rps: number; readonly p50: number; readonly p99: number; readonly errors: number; readonly non2xx: number }

const load = async (scenario: Scenario, target: Target, duration: number): Promise<Measured> => {
  const result = await autocannon({ ...request(scenario, target), connections: CONNECTIONS, duration })
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.timeouts, non2xx: result.non2xx }
}

const mean = (runs: ReadonlyArray<Measured>): Measured => ({
  rps: Math.round(runs.reduce((sum, run) => sum + run.rps, 0) / runs.length),
  p50: Math.max(...runs.map((run) => run.p50)),
  p99: Math.max(...runs.map((run) => run.p99)),
  errors: runs.reduce((sum, run) => sum + run.errors, 0),
  non2xx: runs.reduce((sum, run) => sum + run.non2xx, 0)
})

const lifecycle = (): Promise<Record<string, number>> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, join(import.meta.dirname, "lifecycle.ts"), ...(quick ? ["--quick"] : [])], {
      cwd: root,
      env: process.env,
      stdio: ["ignore", "pipe", "inherit"]
    })
    let output = ""
    child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(output.trim().split("\n").at(-1)!)) : reject(new Error(`lifecycle exited with ${code}`))))
  })

const database = process.env.DATABASE_URL === undefined ? "embedded PGlite (one per process)" : "PostgreSQL (DATABASE_URL)"
console.log(`bench: ${DURATION}s per run, ${CONNECTIONS} connections, A-B-A-B; database: ${database}`)
const service = await start("service.ts")
const baseline = await start("baseline.ts")
const memory: Array<number> = [rssMb(service.child.pid!)]
const results: Record<string, { service: Measured; baseline: Measured; ratio: number }> = {}
try {
  for (const scenario of SCENARIOS) {
    await load(scenario, service, WARMUP)
    await load(scenario, baseline, WARMUP)
    const serviceRuns: Array<Measured> = []
    const baselineRuns: Array<Measured> = []
    for (let round = 0; round < 2; round++) {
      serviceRuns.push(await load(scenario, service, DURATION))
      memory.push(rssMb(service.child.pid!))
      baselineRuns.push(await load(scenario, baseline, DURATION))
    }
    const measured = { service: mean(serviceRuns), baseline: mean(baselineRuns) }
    results[scenario] = { ...measured, ratio: Number((measured.service.rps / measured.baseline.rps).toFixed(2)) }
    console.log(`  ${scenario}: service ${measured.service.rps} req/s, baseline ${measured.baseline.rps} req/s`)
  }
} finally {
  service.child.kill("SIGTERM")
  baseline.child.kill("SIGTERM")
}
const engine = await lifecycle()

const pad = (value: unknown, width: number) => String(value).padStart(width)
console.log("\n| scenario | service req/s | p50 ms | p99 ms | baseline req/s | p50 ms | p99 ms | ratio | errors/non-2xx |")
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for (const [scenario, row] of Object.entries(results)) {
  console.log(`| ${scenario} | ${pad(row.service.rps, 6)} | ${row.service.p50} | ${row.service.p99} | ${pad(row.baseline.rps, 6)} | ${row.baseline.p50} | ${row.baseline.p99} | ${row.ratio} | ${row.service.errors + row.baseline.errors}/${row.service.non2xx + row.baseline.non2xx} |`)
}
console.log(`\nlifecycle: ${engine.evidenceEventsPerSecond} evidence events/s (${engine.events} events over ${engine.invoices} invoices); swept ${engine.swept} due invoices in ${engine.sweepSeconds} s (${engine.sweptPerSecond}/s)`)
// The heap grows to a working size under load; a leak keeps growing through the later rounds.
const middle = memory[Math.floor(memory.length / 2)]
const growth = memory.at(-1)! - middle
console.log(`service RSS per round (MB): ${memory.join(", ")}; growth over the second half: ${growth} MB${growth > middle * 0.1 ? " (check for a leak)" : " (stable)"}`)

const machine = { cores: cpus().length, cpu: cpus()[0]?.model, memoryGb: Math.round(totalmem() / 2 ** 30), node: process.version, database }
const report = { date: new Date().toISOString(), quick, durationSeconds: DURATION, connections: CONNECTIONS, machine, results, lifecycle: engine, serviceRssMb: memory }
const directory = join(root, "bench", "results")
mkdirSync(directory, { recursive: true })
writeFileSync(join(directory, `${report.date.replaceAll(":", "-")}.json`), `${JSON.stringify(report, null, 2)}\n`)
writeFileSync(join(directory, "latest.json"), `${JSON.stringify(report, null, 2)}\n`)
console.log(`written to bench/results/latest.json`)
process.exit(0)
