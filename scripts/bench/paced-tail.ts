/**
 * Where the tail of a paced (open-loop) load comes from: runs the service (or, with
 * `--target baseline`, the raw baseline) with --trace-gc-nvp and an event-loop delay monitor under a
 * steady request rate, and prints the latency percentiles next to the GC pauses, the bytes each
 * scavenge copied and promoted, and the longest event-loop delays of that window, each per thread:
 * the main thread's isolate and the payment worker thread's are told apart (the promotion line of
 * `npm run bench` is the main thread's: it serves the requests).
 *
 *   DATABASE_URL=... [SERVICE_NODE_FLAGS="--max-semi-space-size=32"] node --experimental-strip-types \
 *     scripts/bench/paced-tail.ts [create|public-status|status|detail] [rate] [seconds] [--target baseline] [--json]
 *
 * With --json it ends with one JSON line of the figures (what `npm run bench` reads).
 */
import { join } from "node:path"
import { parseArgs } from "node:util"
import { pacedLoad } from "./paced.ts"
import { benchServiceEnv, type Child, freePort, pacedRequestsFor, ROOT, type Scenario, type Seeded, startNode, stop, waitForHttp } from "./shared.ts"

const { positionals, values } = parseArgs({ allowPositionals: true, options: { target: { type: "string", default: "service" }, json: { type: "boolean", default: false } } })
const scenario = (positionals[0] ?? "public-status").replace("-", " ") as Scenario
const rate = Number(positionals[1] ?? "1000")
const seconds = Number(positionals[2] ?? "8")
const target = values.target === "baseline" ? "baseline" : "service"
const env = { ...process.env }
const seed = (await startNode(join(import.meta.dirname, "setup.ts"), ["--label", target, "--merchants", "50"], env, { label: "setup" }).firstJson) as unknown as Seeded

interface Pause {
  readonly kind: string
  readonly ms: number
  readonly survivedBytes: number
  readonly promotedBytes: number
  /** "main" for the main thread's isolate, "worker" for a worker thread's. */
  readonly thread: string
}
// --trace-gc-nvp prefixes each line with [pid:isolate:...]: the first isolate to collect is the
// main thread's (it collects while loading modules, before any worker thread exists).
let mainIsolate: string | undefined
const pauses: Array<Pause> = []
const delays: Array<{ readonly maxMs: number; readonly p99Ms: number; readonly thread: string }> = []
let measuring = false
const write = process.stderr.write.bind(process.stderr)
process.stderr.write = ((chunk: string | Uint8Array, ...rest: Array<never>) => {
  const text = chunk.toString()
  if (!text.includes(`[${target}]`)) return write(chunk, ...rest)
  for (const line of text.split("\n")) {
    const gc = /\bgc=(\S+)/.exec(line)
    const delay = /\[event-loop] max ([\d.]+) p99 ([\d.]+) ?(\w*)/.exec(line)
    const isolate = gc === null ? undefined : /\[\d+:(0x[\da-f]+)/.exec(line)?.[1]
    if (isolate !== undefined && mainIsolate === undefined) mainIsolate = isolate
    if (gc !== null && measuring) {
      const field = (name: string) => Number(new RegExp(`\\b${name}=([\\d.]+)`).exec(line)?.[1] ?? 0)
      pauses.push({
        kind: gc[1] === "s" ? "scavenge" : gc[1],
        ms: field("pause"),
        survivedBytes: field("new_space_survived"),
        promotedBytes: field("promoted"),
        thread: isolate === mainIsolate ? "main" : "worker"
      })
    } else if (delay !== null) {
      if (measuring) delays.push({ maxMs: Number(delay[1]), p99Ms: Number(delay[2]), thread: delay[3] || "main" })
    } else if (gc === null && line.trim() !== "") write(`${line}\n`)
  }
  return true
}) as typeof process.stderr.write

const nodeFlags = ["--trace-gc-nvp", `--import=${join(import.meta.dirname, "event-loop-monitor.ts")}`, ...(process.env.SERVICE_NODE_FLAGS ?? "").split(" ").filter(Boolean)]
const port = await freePort()
let child: Child
if (target === "service") {
  child = startNode(join(ROOT, "src", "main.ts"), [], benchServiceEnv(env, port), { label: target, nodeFlags })
  await waitForHttp(`http://127.0.0.1:${port}/api/checkout/pay/${seed.invoiceIds[0]}/status`, child)
} else {
  child = startNode(join(import.meta.dirname, "raw-server.ts"), [], { ...env, PORT: String(port), BENCH_API_RATE_LIMIT: "1000000" }, { label: target, nodeFlags })
  await child.firstJson
}
const requests = pacedRequestsFor(scenario, seed)
const base = `http://127.0.0.1:${port}`
const connections = Number(process.env.PACED_CONNECTIONS ?? "50")
await pacedLoad(base, requests, { rate, seconds: 3, connections })
measuring = true
const run = await pacedLoad(base, requests, { rate, seconds, connections })
measuring = false
console.log(`${target} ${scenario} paced at ${rate} req/s for ${seconds} s: p50 ${run.p50} ms, p99 ${run.p99} ms, non-2xx ${run.non2xx}, errors ${run.errors}`)
const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1)
for (const [thread, kind] of [...new Set(pauses.map((pause) => `${pause.thread} ${pause.kind}`))].map((key) => key.split(" "))) {
  const list = pauses.filter((pause) => pause.kind === kind && pause.thread === thread)
  const total = (pick: (pause: Pause) => number) => list.reduce((sum, pause) => sum + pick(pause), 0)
  console.log(`  GC ${kind} (${thread} thread): ${list.length} pauses, total ${total((p) => p.ms).toFixed(0)} ms, max ${Math.max(...list.map((p) => p.ms)).toFixed(1)} ms` +
    (kind === "scavenge" ? `, per pause ${mb(total((p) => p.survivedBytes) / list.length)} MB survived, ${mb(total((p) => p.promotedBytes) / list.length)} MB promoted` : ""))
}
for (const thread of new Set(delays.map((delay) => delay.thread))) {
  const list = delays.filter((delay) => delay.thread === thread)
  console.log(`  ${thread} thread's event-loop delay per second: max ${list.map((d) => d.maxMs).join(", ")} ms; p99 ${list.map((d) => d.p99Ms).join(", ")} ms`)
}
await stop(child)
if (values.json) {
  // the main thread's isolate: the one that serves the requests
  const scavenges = pauses.filter((pause) => pause.kind === "scavenge" && pause.thread === "main")
  const promoted = scavenges.reduce((sum, pause) => sum + pause.promotedBytes, 0)
  console.log(JSON.stringify({
    target,
    scenario,
    rate,
    seconds,
    p50Ms: run.p50,
    p99Ms: run.p99,
    scavenges: scavenges.length,
    promotedMbPerScavenge: scavenges.length === 0 ? 0 : Number(mb(promoted / scavenges.length)),
    fullGcs: pauses.filter((pause) => pause.kind !== "scavenge" && pause.thread === "main").length
  }))
}
process.exit(0)
