/**
 * Where the objects that a scavenge promotes are allocated: runs the service under a paced load
 * and, through the inspector, V8's sampling heap profiler set to keep only allocations that
 * survived the young generation (collected by a full GC, or still alive), then prints the
 * allocation stacks with the most sampled bytes. An object promoted per request shows up here
 * with the code that allocated it; the retainer is then found by reading that code.
 *
 *   DATABASE_URL=... node --experimental-strip-types scripts/bench/promotion-sites.ts [status|detail|create|public-status] [rate] [seconds]
 */
import { join } from "node:path"
import { pacedLoad } from "./paced.ts"
import { benchServiceEnv, freePort, openInspector, pacedRequestsFor, ROOT, type Scenario, type Seeded, startNode, stop, waitForHttp } from "./shared.ts"

interface SamplingNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly selfSize: number
  readonly children: ReadonlyArray<SamplingNode>
}

const scenario = (process.argv[2] ?? "status").replace("-", " ") as Scenario
const rate = Number(process.argv[3] ?? "1000")
const seconds = Number(process.argv[4] ?? "6")
const env = { ...process.env }
const seed = (await startNode(join(import.meta.dirname, "setup.ts"), ["--label", "service", "--merchants", "50"], env, { label: "setup" }).firstJson) as unknown as Seeded
const port = await freePort()
const child = startNode(join(ROOT, "src", "main.ts"), [], benchServiceEnv(env, port), { label: "service", nodeFlags: ["--inspect=127.0.0.1:0"] })
await waitForHttp(`http://127.0.0.1:${port}/api/checkout/pay/${seed.invoiceIds[0]}/status`, child)
const inspectorUrl = await child.inspector
if (inspectorUrl === undefined) throw new Error("no inspector")

const inspector = await openInspector(inspectorUrl, 60_000)

const requests = pacedRequestsFor(scenario, seed)
const base = `http://127.0.0.1:${port}`
await pacedLoad(base, requests, { rate, seconds: 3, connections: 50 })
await inspector.call("HeapProfiler.enable")
await inspector.call("HeapProfiler.startSampling", { samplingInterval: 16_384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: false })
const run = await pacedLoad(base, requests, { rate, seconds, connections: 50 })
const { profile } = await inspector.call("HeapProfiler.stopSampling")
inspector.close()
await stop(child)

const stacks = new Map<string, number>()
const frameName = (node: SamplingNode) => `${node.callFrame.functionName || "(anonymous)"} ${node.callFrame.url.replace(/^.*\/work\/[^/]+\//, "")}:${node.callFrame.lineNumber}`
const walk = (node: SamplingNode, path: ReadonlyArray<string>) => {
  const here = [...path, frameName(node)]
  if (node.selfSize > 0) {
    const key = here.slice(-8).reverse().join("\n      <- ")
    stacks.set(key, (stacks.get(key) ?? 0) + node.selfSize)
  }
  for (const next of node.children) walk(next, here)
}
walk(profile.head as SamplingNode, [])
const total = [...stacks.values()].reduce((sum, size) => sum + size, 0)
console.log(`${scenario} paced at ${rate} req/s for ${seconds} s (p50 ${run.p50} ms, p99 ${run.p99} ms): ${(total / 2 ** 20).toFixed(1)} MB sampled that outlived a scavenge`)
for (const [stack, size] of [...stacks].sort((a, b) => b[1] - a[1]).slice(0, 12)) {
  console.log(`${(size / 2 ** 20).toFixed(2).padStart(7)} MB  ${stack}`)
}
process.exit(0)
