import type { buildConnector } from "undici"
import { checkDestination, type Resolver } from "./Destination.ts"
import { WebhookAgents } from "./WebhookAgents.ts"
import { loadUndici, WEBHOOK_TIMEOUT_MS } from "./WebhookConnector.ts"

const EXCERPT_BYTES = 1024

export interface SendResult {
  readonly ok: boolean
  readonly statusCode: number | null
  readonly durationMs: number
  readonly error: string | null
  readonly responseExcerpt: string | null
}

export interface WebhookRequest {
  readonly url: string
  readonly body: string
  readonly headers: Record<string, string>
  readonly resolve: Resolver
  readonly connect: buildConnector.connector
  /**
   * Keep-alive connections shared between attempts (the dispatcher's); without it the attempt
   * opens a connection of its own and closes it afterwards.
   */
  readonly agents?: WebhookAgents
  readonly allowLoopback: boolean
  readonly timeoutMs?: number
  /** Aborted when the caller gives the attempt up (its fiber was interrupted). */
  readonly signal?: AbortSignal
}

const UNDICI_TIMEOUTS = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"])

const untilAborted = <A>(promise: Promise<A>, signal: AbortSignal): Promise<A> =>
  new Promise<A>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    if (signal.aborted) return onAbort()
    signal.addEventListener("abort", onAbort, { once: true })
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort))
  })

/**
 * Reads the response up to 1 KiB. A body read to its end leaves the connection for the next
 * attempt; a longer one is cut off, which closes the connection.
 */
const readExcerpt = async (body: AsyncIterable<Uint8Array> & { destroy: () => unknown }): Promise<string> => {
  const chunks: Array<Uint8Array> = []
  let size = 0
  for await (const chunk of body) {
    chunks.push(chunk)
    size += chunk.length
    if (size >= EXCERPT_BYTES) {
      body.destroy()
      break
    }
  }
  return Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString("utf8")
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

/**
 * One delivery attempt: checks the destination (DNS on every attempt), then connects only to the
 * checked address. Redirects are not followed (a 3xx fails), the response is read up to 1 KiB,
 * and one time budget covers DNS, connect, headers and body.
 */
export const sendWebhook = async (attempt: WebhookRequest): Promise<SendResult> => {
  const started = performance.now()
  const timeoutMs = attempt.timeoutMs ?? WEBHOOK_TIMEOUT_MS
  const deadline = AbortSignal.timeout(timeoutMs)
  const signal = attempt.signal === undefined ? deadline : AbortSignal.any([deadline, attempt.signal])
  const failed = (error: string, statusCode: number | null = null, responseExcerpt: string | null = null): SendResult => ({
    ok: false,
    statusCode,
    durationMs: Math.round(performance.now() - started),
    error,
    responseExcerpt
  })
  const own = attempt.agents === undefined ? new WebhookAgents(attempt.connect) : undefined
  try {
    const checked = await untilAborted(checkDestination(attempt.url, attempt.resolve, attempt.allowLoopback), signal)
    if (!checked.ok) return failed(checked.reason)
    const { request } = await loadUndici()
    const agent = await (attempt.agents ?? own!).agentFor(checked.url.origin, checked.addresses[0].address)
    const response = await request(checked.url, {
      method: "POST",
      headers: attempt.headers,
      body: attempt.body,
      dispatcher: agent,
      signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs
    })
    const excerpt = await readExcerpt(response.body)
    const status = response.statusCode
    if (status >= 200 && status < 300) {
      return { ok: true, statusCode: status, durationMs: Math.round(performance.now() - started), error: null, responseExcerpt: excerpt }
    }
    return failed(status >= 300 && status < 400 ? "redirects are not followed" : `HTTP ${status}`, status, excerpt)
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code
    if (deadline.aborted || (typeof code === "string" && UNDICI_TIMEOUTS.has(code))) return failed(`timed out after ${timeoutMs} ms`)
    if (signal.aborted) return failed("attempt abandoned")
    return failed(messageOf(error))
  } finally {
    own?.close().catch(() => undefined)
  }
}
