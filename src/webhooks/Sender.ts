import { lookup } from "node:dns/promises"
import type { LookupFunction } from "node:net"
import { Agent, request } from "undici"
import { checkDestination, type Resolver } from "./Destination.ts"

export const WEBHOOK_TIMEOUT_MS = 10_000
const EXCERPT_BYTES = 1024

export interface SendResult {
  readonly ok: boolean
  readonly statusCode: number | null
  readonly durationMs: number
  readonly error: string | null
  readonly responseExcerpt: string | null
}

export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }))

const readExcerpt = async (body: AsyncIterable<Uint8Array> & { destroy?: () => void }): Promise<string> => {
  const chunks: Array<Uint8Array> = []
  let size = 0
  for await (const chunk of body) {
    chunks.push(chunk)
    size += chunk.length
    if (size >= EXCERPT_BYTES) break
  }
  body.destroy?.()
  return Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString("utf8")
}

/**
 * One delivery attempt: checks the destination (DNS on every attempt), then connects only to the
 * checked address (pinned lookup; Host and SNI keep the hostname). Redirects are not followed (a
 * 3xx fails), and one 10-second budget covers connect, headers and body.
 */
export const sendWebhook = async (options: {
  readonly url: string
  readonly body: string
  readonly headers: Record<string, string>
  readonly resolver: Resolver
  readonly allowLoopback: boolean
  readonly timeoutMs?: number
}): Promise<SendResult> => {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  const checked = await checkDestination(options.url, options.resolver, options.allowLoopback)
  if (!checked.ok) return { ok: false, statusCode: null, durationMs: elapsed(), error: checked.reason, responseExcerpt: null }
  const pinned = checked.addresses[0]
  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS
  const agent = new Agent({
    connect: {
      timeout: timeoutMs,
      lookup: ((_hostname: string, lookupOptions: { all?: boolean }, callback: (...args: Array<unknown>) => void) =>
        lookupOptions.all === true
          ? callback(null, [{ address: pinned.address, family: pinned.family }])
          : callback(null, pinned.address, pinned.family)) as unknown as LookupFunction
    },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs
  })
  try {
    const response = await request(checked.url, {
      method: "POST",
      headers: options.headers,
      body: options.body,
      dispatcher: agent,
      signal: AbortSignal.timeout(timeoutMs)
    })
    const excerpt = await readExcerpt(response.body)
    const ok = response.statusCode >= 200 && response.statusCode < 300
    return {
      ok,
      statusCode: response.statusCode,
      durationMs: elapsed(),
      error: ok ? null : response.statusCode >= 300 && response.statusCode < 400 ? "redirects are not followed" : `HTTP ${response.statusCode}`,
      responseExcerpt: excerpt
    }
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError" || /timeout/i.test(error.message))
    return {
      ok: false,
      statusCode: null,
      durationMs: elapsed(),
      error: timedOut ? `timed out after ${timeoutMs} ms` : error instanceof Error ? error.message : String(error),
      responseExcerpt: null
    }
  } finally {
    await agent.close().catch(() => undefined)
  }
}
