/**
 * The public status stream (GET /api/checkout/pay/:id/events) against its budget:
 * - 10,000 idle streams on one instance: under 2 KB of memory each (live JS heap after a full GC,
 *   and resident memory, each as the difference with and without the streams, per stream) and no
 *   CPU while idle (the service's CPU over an idle window that includes a heartbeat);
 * - an evidence commit (the dev simulator's payment) reaches the clients of 1,000 open streams of
 *   that invoice with p99 under 250 ms (from the request sent, and from its answer received).
 *
 *   [DATABASE_URL=<a fresh database>] node --experimental-strip-types scripts/bench/status-stream.ts [--streams 10000] [--fan-out 1000] [--rounds 5]
 *
 * The service runs as a child (src/main.ts, CHECKOUT_ROLE=api, the demo merchant for the
 * simulator's session); the clients are plain node:http requests from this process, spread over
 * 127.0.0.x source addresses because one address may hold only 16 streams. Both share the
 * machine's cores, so the latency includes the clients' own parsing.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import http from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { DEMO_EMAIL, DEMO_PASSWORD } from "../../src/demo/DemoMerchant.ts"
import { benchServiceEnv, freePort, heapAfterGcMb, openInspector, rssMb, startNode, stop, waitForHttp } from "./shared.ts"

interface SamplingNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly selfSize: number
  readonly children: ReadonlyArray<SamplingNode>
}
/** The allocation sites that hold the most of what is still live, from V8's sampling heap profiler. */
const topSites = (root: SamplingNode, count: number) => {
  const bySite = new Map<string, number>()
  const visit = (node: SamplingNode, path: ReadonlyArray<string>) => {
    const frame = node.callFrame
    const here = `${frame.functionName || "(anonymous)"} ${frame.url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*\/work\/main\//, "")}:${frame.lineNumber + 1}`
    const site = [...path.slice(-2), here].join(" < ")
    if (node.selfSize > 0) bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize)
    for (const child of node.children) visit(child, [...path, here])
  }
  visit(root, [])
  return [...bySite].sort((a, b) => b[1] - a[1]).slice(0, count)
}

const { values: flags } = parseArgs({
  options: {
    streams: { type: "string", default: "10000" },
    "fan-out": { type: "string", default: "1000" },
    rounds: { type: "string", default: "5" },
    "heap-sites": { type: "boolean", default: false }
  }
})
const STREAMS = Number(flags.streams)
const FAN_OUT = Number(flags["fan-out"])
const ROUNDS = Number(flags.rounds)
/** The per-address cap of the service (StatusStreamSettings.maxPerClient). */
const PER_ADDRESS = 16
const IDLE_WINDOW_MS = 20_000

const ticks = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")
  return Number(fields[11]) + Number(fields[12])
}
/** Clock ticks are 10 ms on Linux. */
const TICK_MS = 10

interface Client {
  events: number
  heartbeats: number
  onStatus: ((at: number) => void) | undefined
  readonly close: () => void
}

let nextAddress = 0
/** The n-th client's source address: 16 streams per address, from 127.0.1.0 up. */
const sourceAddress = () => {
  const n = Math.floor(nextAddress++ / PER_ADDRESS) + 256
  return `127.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`
}

const openStream = (port: number, invoiceId: string) =>
  new Promise<Client>((resolve, reject) => {
    const request = http.get({ host: "127.0.0.1", port, path: `/api/checkout/pay/${invoiceId}/events`, localAddress: sourceAddress(), agent: false }, (response) => {
      if (response.statusCode !== 200) {
        response.resume()
        return reject(new Error(`stream answered ${response.statusCode}`))
      }
      response.setEncoding("utf8")
      let buffer = ""
      const client: Client = { events: 0, heartbeats: 0, onStatus: undefined, close: () => request.destroy() }
      response.on("data", (chunk: string) => {
        buffer += chunk
        let end: number
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          if (block === ": heartbeat") client.heartbeats++
          else if (block.includes("event: status")) {
            client.events++
            client.onStatus?.(performance.now())
          }
        }
      })
      response.on("error", () => undefined)
      resolve(client)
    })
    request.on("error", reject)
  })

/** Opens `count` streams, `concurrency` at a time, and waits until each has its first event. */
const openMany = async (port: number, invoiceIds: ReadonlyArray<string>, count: number, concurrency = 100) => {
  const clients: Array<Client> = []
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) {
      const index = next++
      clients.push(await openStream(port, invoiceIds[index % invoiceIds.length]))
    }
  }))
  const deadline = Date.now() + 120_000
  while (clients.some((client) => client.events === 0)) {
    if (Date.now() > deadline) throw new Error("streams without their first event after 120 s")
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return clients
}

const json = async (response: Response) => {
  const body = await response.json() as Record<string, any>
  if (!response.ok) throw new Error(`${response.status} ${JSON.stringify(body)}`)
  return body
}

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits

const main = async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "checkout-status-stream-"))
  const port = await freePort()
  const service = startNode("src/main.ts", [], benchServiceEnv(process.env, port, { CHECKOUT_DEMO: "true", CHECKOUT_DATA_DIR: dataDir }), {
    label: "service",
    nodeFlags: ["--inspect=127.0.0.1:0"]
  })
  const base = `http://127.0.0.1:${port}`
  try {
    await waitForHttp(`${base}/api/health`, service, 120_000)
    const inspector = (await service.inspector)!
    // The demo merchant is created next to the routes; its key file appears shortly after they answer.
    const keyFile = join(dataDir, "demo-api-key.txt")
    for (let waited = 0; !existsSync(keyFile); waited += 100) {
      if (waited > 60_000) throw new Error("the demo merchant's API key file did not appear")
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const apiKey = readFileSync(keyFile, "utf8").trim()
    const { token } = await json(await fetch(`${base}/api/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: DEMO_EMAIL, password: DEMO_PASSWORD })
    }))
    const createInvoice = async () =>
      json(await fetch(`${base}/api/checkout/invoices`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": apiKey },
        body: JSON.stringify({ amountUsd: 1000 })
      }))
    const idleInvoices = await Promise.all(Array.from({ length: 100 }, createInvoice))
    const fanOutInvoice = await createInvoice()
    const pid = service.process.pid!

    // ---- idle streams: memory and CPU (the service's own background work measured first, without streams)
    const baselineTicks = ticks(pid)
    await new Promise((resolve) => setTimeout(resolve, IDLE_WINDOW_MS))
    const baselineCpuMs = (ticks(pid) - baselineTicks) * TICK_MS
    const heapBefore = await heapAfterGcMb(inspector)
    const sampler = flags["heap-sites"] ? await openInspector(inspector) : undefined
    await sampler?.call("HeapProfiler.startSampling", { samplingInterval: 512 })
    const rssBefore = rssMb(pid)
    const openedAt = performance.now()
    const idle = await openMany(port, idleInvoices.map((invoice) => String(invoice.id)), STREAMS)
    const openSeconds = (performance.now() - openedAt) / 1000
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    const heapWith = await heapAfterGcMb(inspector)
    if (sampler !== undefined) {
      const { profile } = await sampler.call("HeapProfiler.getSamplingProfile")
      await sampler.call("HeapProfiler.stopSampling")
      sampler.close()
      console.log("live bytes per stream by allocation site (sampled):")
      for (const [site, bytes] of topSites(profile.head as SamplingNode, 25)) console.log(`  ${String(Math.round(bytes / STREAMS)).padStart(6)} B  ${site}`)
    }
    const rssWith = rssMb(pid)
    const ticksBefore = ticks(pid)
    const beatsBefore = idle[0].heartbeats
    await new Promise((resolve) => setTimeout(resolve, IDLE_WINDOW_MS))
    const idleCpuMs = (ticks(pid) - ticksBefore) * TICK_MS
    const heartbeatRounds = idle[0].heartbeats - beatsBefore
    const stillOpen = idle.filter((client) => client.events > 0).length

    // ---- fan-out of one commit to FAN_OUT clients of one invoice
    const watchers = await openMany(port, [String(fanOutInvoice.id)], FAN_OUT)
    const option = (fanOutInvoice.paymentOptions as Array<{ id: string; isDefault: boolean }>).find((candidate) => candidate.isDefault) ??
      fanOutInvoice.paymentOptions[0]
    const fromSent: Array<number> = []
    const fromAnswer: Array<number> = []
    for (let roundIndex = 0; roundIndex < ROUNDS; roundIndex++) {
      const arrivals: Array<number> = []
      const all = new Promise<void>((resolve) => {
        for (const watcher of watchers) {
          watcher.onStatus = (at) => {
            arrivals.push(at)
            watcher.onStatus = undefined
            if (arrivals.length === watchers.length) resolve()
          }
        }
      })
      const sent = performance.now()
      const response = await fetch(`${base}/api/dev/invoices/${fanOutInvoice.id}/simulate-payment`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ paymentOptionId: option.id, amount: "1" })
      })
      const answered = performance.now()
      await json(response)
      await Promise.race([all, new Promise((_, reject) =>
        setTimeout(() => reject(new Error(`round ${roundIndex}: ${arrivals.length} of ${watchers.length} clients got the event in 30 s`)), 30_000)
      )])
      for (const at of arrivals) {
        fromSent.push(at - sent)
        fromAnswer.push(Math.max(0, at - answered))
      }
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
    fromSent.sort((a, b) => a - b)
    fromAnswer.sort((a, b) => a - b)
    for (const client of [...idle, ...watchers]) client.close()

    const report = {
      database: process.env.DATABASE_URL === undefined ? "embedded PGlite" : "PostgreSQL",
      idle: {
        streams: STREAMS,
        openSeconds: round(openSeconds),
        streamsStillOpen: stillOpen,
        heapMbBefore: heapBefore,
        heapMbWith: heapWith,
        heapBytesPerStream: Math.round(((heapWith - heapBefore) * 2 ** 20) / STREAMS),
        rssMbBefore: rssBefore,
        rssMbWith: rssWith,
        rssBytesPerStream: Math.round(((rssWith - rssBefore) * 2 ** 20) / STREAMS),
        idleWindowSeconds: IDLE_WINDOW_MS / 1000,
        idleCpuMs,
        idleCpuMsWithoutStreams: baselineCpuMs,
        heartbeatRounds,
        cpuMicrosPerHeartbeat: heartbeatRounds === 0 ? null : Math.round(((idleCpuMs - baselineCpuMs) * 1000) / (heartbeatRounds * STREAMS)),
        idleCpuPercentOfOneCore: round((idleCpuMs / IDLE_WINDOW_MS) * 100, 2)
      },
      fanOut: {
        clients: FAN_OUT,
        rounds: ROUNDS,
        fromRequestSentMs: { p50: round(percentile(fromSent, 50)), p99: round(percentile(fromSent, 99)), max: round(fromSent.at(-1)!) },
        fromAnswerMs: { p50: round(percentile(fromAnswer, 50)), p99: round(percentile(fromAnswer, 99)), max: round(fromAnswer.at(-1)!) }
      }
    }
    console.log(`status stream (${report.database})`)
    console.log(`  ${STREAMS} idle streams opened in ${report.idle.openSeconds} s; ${stillOpen} still open after the idle window`)
    console.log(`  memory per idle stream: ${report.idle.heapBytesPerStream} B of JS heap after GC, ${report.idle.rssBytesPerStream} B resident (budget 2048 B)`)
    console.log(
      `  CPU while idle: ${idleCpuMs} ms over ${
        IDLE_WINDOW_MS / 1000
      } s with the streams (${heartbeatRounds} heartbeat round(s) to every stream: ${report.idle.cpuMicrosPerHeartbeat} µs each), ${baselineCpuMs} ms without them`
    )
    console.log(
      `  one commit to ${FAN_OUT} clients, ${ROUNDS} rounds: p50 ${report.fanOut.fromRequestSentMs.p50} ms, p99 ${report.fanOut.fromRequestSentMs.p99} ms, max ${report.fanOut.fromRequestSentMs.max} ms from the request sent (p99 ${report.fanOut.fromAnswerMs.p99} ms after its answer; budget p99 250 ms)`
    )
    console.log(JSON.stringify(report))
  } finally {
    await stop(service)
    rmSync(dataDir, { recursive: true, force: true })
  }
}

await main()
