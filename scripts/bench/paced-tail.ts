/**
 * Where the tail of a paced (open-loop) load comes from: runs the service with --trace-gc under a
 * steady request rate and prints the latency percentiles next to the GC pauses of that window.
 *
 *   DATABASE_URL=... [SERVICE_NODE_FLAGS="--max-semi-space-size=32"] node --experimental-strip-types \
 *     scripts/bench/paced-tail.ts [create|public-status] [rate] [seconds]
 */
import { join } from "node:path"
import { pacedLoad } from "./paced.ts"
import { freePort, ROOT, type Seeded, startNode, stop, waitForHttp } from "./shared.ts"

const scenario = process.argv[2] ?? "public-status"
const rate = Number(process.argv[3] ?? "1000")
const seconds = Number(process.argv[4] ?? "8")
const env = { ...process.env }
const seed = (await startNode(join(import.meta.dirname, "setup.ts"), ["--label", "service", "--merchants", "50"], env, { label: "setup" }).firstJson) as unknown as Seeded
const port = await freePort()
const gcLines: Array<string> = []
const write = process.stderr.write.bind(process.stderr)
let measuring = false
process.stderr.write = ((chunk: string | Uint8Array, ...rest: Array<never>) => {
  const text = chunk.toString()
  if (text.includes("[service]") && /Scavenge|Mark-Compact|Minor|Mark-Sweep/.test(text)) {
    if (measuring) gcLines.push(text)
    return true
  }
  return write(chunk, ...rest)
}) as typeof process.stderr.write
const child = startNode(join(ROOT, "src", "main.ts"), [], {
  ...env, PORT: String(port), HOST: "127.0.0.1", CHECKOUT_ENV: "test", CHECKOUT_DEMO: "false", CHECKOUT_ROLE: "api",
  CHECKOUT_API_RATE_LIMIT: "1000000", REDIS_URL: "", CHECKOUT_PRICE_URL: ""
}, { label: "service", nodeFlags: ["--trace-gc", ...(process.env.SERVICE_NODE_FLAGS ?? "").split(" ").filter(Boolean)] })
await waitForHttp(`http://127.0.0.1:${port}/api/checkout/pay/${seed.invoiceIds[0]}/status`, child)
const requests = scenario === "create"
  ? seed.apiKeys.map((key) => ({ method: "POST" as const, path: "/api/checkout/invoices", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify({ amountUsd: 25.5 }) }))
  : seed.invoiceIds.map((id) => ({ method: "GET" as const, path: `/api/checkout/pay/${id}/status`, headers: {} }))
await pacedLoad(`http://127.0.0.1:${port}`, requests, { rate, seconds: 3, connections: 50 })
measuring = true
const run = await pacedLoad(`http://127.0.0.1:${port}`, requests, { rate, seconds, connections: 50 })
measuring = false
const pauses = gcLines.flatMap((line) => {
  const match = /(Scavenge|Mark-Compact|Minor Mark-Sweep|Mark-Sweep).*?([\d.]+) \/ ([\d.]+) ms/.exec(line)
  return match === null ? [] : [{ kind: match[1], ms: Number(match[2]) }]
})
const byKind = new Map<string, Array<number>>()
for (const pause of pauses) byKind.set(pause.kind, [...(byKind.get(pause.kind) ?? []), pause.ms])
console.log(`${scenario} paced at ${rate} req/s for ${seconds} s: p50 ${run.p50} ms, p99 ${run.p99} ms, non-2xx ${run.non2xx}, errors ${run.errors}`)
for (const [kind, list] of byKind) {
  console.log(`  GC ${kind}: ${list.length} pauses, total ${list.reduce((a, b) => a + b, 0).toFixed(0)} ms, max ${Math.max(...list).toFixed(1)} ms`)
}
await stop(child)
process.exit(0)
