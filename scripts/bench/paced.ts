/**
 * An open-loop load: requests start at a steady rate (one every 1/rate s, not in bursts at each
 * second as autocannon's rate option sends them) over a pool of keep-alive connections, and each
 * latency counts from the moment its request was due, so time spent queued behind a slow answer
 * is included (no coordinated omission).
 */
import { Pool } from "undici"

export interface PacedRequest {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly headers: Record<string, string>
  readonly body?: string
}

export interface PacedRun {
  readonly rate: number
  readonly sent: number
  readonly p50: number
  readonly p99: number
  readonly non2xx: number
  readonly errors: number
}

const percentile = (sorted: ReadonlyArray<number>, share: number) => sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)]

export const pacedLoad = async (base: string, requests: ReadonlyArray<PacedRequest>, options: {
  readonly rate: number
  readonly seconds: number
  readonly connections: number
}): Promise<PacedRun> => {
  const pool = new Pool(base, { connections: options.connections, pipelining: 1 })
  const latencies: Array<number> = []
  let non2xx = 0
  let errors = 0
  let sent = 0
  const inFlight = new Set<Promise<void>>()
  const start = performance.now()
  const total = Math.round(options.rate * options.seconds)
  const fire = (due: number) => {
    const request = requests[sent % requests.length]
    const done = pool.request({ method: request.method, path: request.path, headers: request.headers, body: request.body })
      .then(async (response) => {
        await response.body.dump()
        latencies.push(performance.now() - due)
        if (response.statusCode < 200 || response.statusCode > 299) non2xx++
      }, () => {
        errors++
      })
      .finally(() => inFlight.delete(done))
    inFlight.add(done)
    sent++
  }
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const elapsed = performance.now() - start
      const due = Math.min(total, Math.floor((elapsed * options.rate) / 1000))
      while (sent < due) fire(start + (sent * 1000) / options.rate)
      if (sent >= total) {
        clearInterval(timer)
        resolve()
      }
    }, 1)
  })
  await Promise.all(inFlight)
  await pool.close()
  const sorted = latencies.sort((a, b) => a - b)
  const round = (value: number) => Number(value.toFixed(1))
  return { rate: options.rate, sent, p50: round(percentile(sorted, 0.5)), p99: round(percentile(sorted, 0.99)), non2xx, errors }
}
