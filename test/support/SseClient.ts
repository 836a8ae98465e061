import { Context, Effect, Exit, Layer, Scope } from "effect"
import type { AppConfigShape } from "../../src/config/AppConfig.ts"
import { StatusStreamSettings } from "../../src/invoices/StatusStream.ts"
import { TestServer, testApp } from "./TestApp.ts"
import type { JsonBody } from "./Json.ts"

/** One block of an event stream: an event (id, event, data) or a comment. */
export interface SseBlock {
  readonly id?: string
  readonly event?: string
  readonly data?: string
  readonly comment?: string
  readonly retry?: string
}

const parse = (block: string): SseBlock => {
  const fields: Record<string, string> = {}
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) fields.comment = line.slice(1).trim()
    else {
      const colon = line.indexOf(":")
      fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart()
    }
  }
  return fields
}

/** Fails a read that takes longer than a hang guard (never a timing assertion). */
const guarded = <A>(promise: Promise<A>, ms: number, what: string) =>
  new Promise<A>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms)
    promise.then((value) => (clearTimeout(timer), resolve(value)), (error) => (clearTimeout(timer), reject(error)))
  })

/** A Server-Sent Events client over fetch, reading block by block. */
export const openEvents = async (baseUrl: string, invoiceId: string, headers: Record<string, string> = {}) => {
  const controller = new AbortController()
  const response = await fetch(`${baseUrl}/api/checkout/pay/${invoiceId}/events`, { headers, signal: controller.signal })
  const reader = response.body?.getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  /** The next block, or undefined when the stream has ended. */
  const next = async (ms = 10_000): Promise<SseBlock | undefined> => {
    while (true) {
      const end = buffer.indexOf("\n\n")
      if (end >= 0) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        return parse(block)
      }
      if (reader === undefined) return undefined
      const { done, value } = await guarded(reader.read(), ms, "stream data")
      if (done) return undefined
      buffer += decoder.decode(value, { stream: true })
    }
  }
  /** The next status event (skipping comments and the retry hint), or undefined when the stream has ended. */
  const nextStatus = async (ms = 10_000): Promise<{ id: string; status: JsonBody } | undefined> => {
    while (true) {
      const block = await next(ms)
      if (block === undefined) return undefined
      if (block.event === "status") return { id: block.id!, status: JSON.parse(block.data!) }
    }
  }
  return {
    response,
    next,
    nextStatus,
    close: () => {
      controller.abort()
      return reader?.cancel().catch(() => undefined)
    }
  }
}

/** The test app with the status streams' settings replaced (a short heartbeat, a small cap). */
export const startStreamingApp = async (
  settings: Partial<typeof StatusStreamSettings.Service>,
  overrides: Partial<AppConfigShape> = {},
  extraEnv: Readonly<Record<string, string>> = {}
) => {
  const scope = Effect.runSync(Scope.make())
  const layer = testApp(overrides, extraEnv).pipe(Layer.provide(Layer.succeed(StatusStreamSettings, { heartbeatMs: 15_000, maxPerClient: 16, ...settings })))
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  const server = Context.get(context, TestServer)
  return {
    baseUrl: server.baseUrl,
    createMerchant: async () => {
      const merchant = await Effect.runPromise(server.createMerchant())
      return {
        ...merchant,
        api: (path: string, init?: Parameters<typeof merchant.api>[1]) => Effect.runPromise(merchant.api(path, init)),
        dashboard: (path: string, init?: Parameters<typeof merchant.dashboard>[1]) => Effect.runPromise(merchant.dashboard(path, init))
      }
    },
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
