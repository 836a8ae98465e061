import { createHash } from "node:crypto"
import { PgClient } from "@effect/sql-pg"
import { type Cause, Clock, Context, Data, Duration, Effect, Layer, Option, Queue, Schedule, Schema, Stream } from "effect"
import { HttpServerResponse } from "effect/http"
import { AppConfig } from "../config/AppConfig.ts"
import type { InvoiceNotFound } from "../domain/Errors.ts"
import { PublicInvoiceStatusView } from "../domain/InvoiceResponses.ts"
import { publicStatusView } from "../domain/InvoiceViews.ts"
import { InvoiceChanges } from "./InvoiceChanges.ts"
import { Invoices } from "./Invoices.ts"

export { InvoiceChanges }

/** The channel every committed change of an invoice or its payments notifies, with the invoice's id (migration 0019). */
const INVOICE_CHANGED_CHANNEL = "checkout_invoice_changed"

/**
 * Statuses after which nothing changes for the payer: the same set the page stops polling at. An
 * `expired` or `voided` invoice can still receive a payment (a late one, issue #57), and its page
 * must show it while open: its stream stays open (heartbeats) until the payer leaves.
 */
export const FINAL_STREAM_STATUSES: ReadonlySet<string> = new Set(["confirmed", "paid_out_of_band"])

/** Settings of the status streams; a Reference so that tests can shorten the heartbeat. */
export const StatusStreamSettings = Context.Reference<{
  /** A comment line this often keeps proxies and load balancers from closing an idle stream. */
  readonly heartbeatMs: number
  /** Open streams one client address may hold on one instance; more answer 429. */
  readonly maxPerClient: number
}>("Invoices/StatusStreamSettings", { defaultValue: () => ({ heartbeatMs: 15_000, maxPerClient: 16 }) })

/** The per-address cap on open streams was reached. */
export class StreamLimitReached extends Data.TaggedError("StreamLimitReached")<{ readonly max: number }> {}

/** One open stream: what it was last sent (the event id, and the read it came from), and its response body. */
interface Listener {
  last: string | undefined
  ticket: number
  readonly client: string
  readonly queue: Queue.Queue<Uint8Array, Cause.Done>
}

const encoder = new TextEncoder()
const HEARTBEAT = encoder.encode(": heartbeat\n\n")
/** Reconnection delay the browser's EventSource uses after a dropped connection. */
const RETRY = encoder.encode("retry: 3000\n\n")

/** The event id: a digest of the status as sent, so "changed since Last-Event-ID" is a comparison. */
const versionOf = (json: string) => createHash("sha256").update(json).digest("base64url").slice(0, 22)

/**
 * Chunks a stream holds for a client that does not read; beyond, the oldest go (each is a whole
 * event or heartbeat, and the newest status is what counts).
 */
const BUFFERED_CHUNKS = 16

/** An event's data is the public status endpoint's answer: the view encoded by the same schema. */
const encodeStatus = Schema.encodeSync(PublicInvoiceStatusView)

/** `ticket` orders reads: a read started later saw a state at least as new, so an older one is never sent after it. */
const snapshotOf = (parts: Effect.Success<ReturnType<Invoices["Service"]["getPublic"]>>, ticket: number, now: Date) => {
  const view = publicStatusView(parts, now)
  const json = JSON.stringify(encodeStatus(view))
  return { id: versionOf(json), json, final: FINAL_STREAM_STATUSES.has(view.status), ticket }
}
type Snapshot = ReturnType<typeof snapshotOf>

/** The event's bytes, encoded once per read and shared by every stream it goes to. */
const chunks = new WeakMap<Snapshot, Uint8Array>()
const eventChunk = (snapshot: Snapshot) => {
  let chunk = chunks.get(snapshot)
  if (chunk === undefined) chunks.set(snapshot, chunk = encoder.encode(`id: ${snapshot.id}\nevent: status\ndata: ${snapshot.json}\n\n`))
  return chunk
}

/** The open streams of this instance, by invoice and by client address. */
const makeRegistry = () => {
  const byInvoice = new Map<string, Set<Listener>>()
  const perClient = new Map<string, number>()
  let open = 0
  return {
    byInvoice,
    openStreams: () => open,
    heldBy: (client: string) => perClient.get(client) ?? 0,
    register: (invoiceId: string, listener: Listener) => {
      let listeners = byInvoice.get(invoiceId)
      if (listeners === undefined) byInvoice.set(invoiceId, listeners = new Set())
      listeners.add(listener)
      perClient.set(listener.client, (perClient.get(listener.client) ?? 0) + 1)
      open++
    },
    unregister: (invoiceId: string, listener: Listener) => {
      const listeners = byInvoice.get(invoiceId)
      if (listeners?.delete(listener) !== true) return
      if (listeners.size === 0) byInvoice.delete(invoiceId)
      const count = (perClient.get(listener.client) ?? 1) - 1
      if (count === 0) perClient.delete(listener.client)
      else perClient.set(listener.client, count)
      open--
    }
  }
}
type Registry = ReturnType<typeof makeRegistry>

/** Sends a snapshot to one stream unless it saw it (or a newer read) already; ends the stream after a final status. */
const send = (listener: Listener, snapshot: Snapshot) => {
  if (snapshot.ticket <= listener.ticket) return
  listener.ticket = snapshot.ticket
  if (listener.last !== snapshot.id) {
    listener.last = snapshot.id
    Queue.offerUnsafe(listener.queue, eventChunk(snapshot))
  }
  if (snapshot.final) Queue.endUnsafe(listener.queue)
}

/**
 * Other instances' changes (PostgreSQL only): one LISTEN per instance on the channel that every
 * committed change of an invoice or its payments notifies with the invoice's id (migration 0019),
 * each put on this process's bus. After a lost connection, every invoice with an open stream here
 * is read again once listening resumes: a change made meanwhile is not missed.
 */
const listenToOtherInstances = (registry: Registry, bus: InvoiceChanges["Service"]) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const pg = config.databaseUrl === undefined ? Option.none() : yield* Effect.serviceOption(PgClient.PgClient)
    if (Option.isNone(pg)) return
    const listen = Effect.scoped(Effect.gen(function*() {
      const notifications = yield* pg.value.listen(INVOICE_CHANGED_CHANNEL)
      for (const invoiceId of registry.byInvoice.keys()) bus.publish(invoiceId)
      while (true) for (const notification of yield* Queue.takeAll(notifications)) bus.publish(notification.payload)
    }))
    yield* listen.pipe(
      Effect.catchCause((cause) => Effect.logWarning("Status stream listener stopped; listening again", cause)),
      Effect.repeat(Schedule.spaced(Duration.seconds(1))),
      Effect.forkScoped
    )
  })

/** The bus's changes read once each and sent to every stream of the invoice; a heartbeat to all streams from one timer. */
const forwardChanges = (registry: Registry, bus: InvoiceChanges["Service"], read: (invoiceId: string) => Effect.Effect<Snapshot, InvoiceNotFound>) =>
  Effect.gen(function*() {
    const settings = yield* StatusStreamSettings
    const refresh = (invoiceId: string) =>
      Effect.flatMap(Effect.option(read(invoiceId)), (snapshot) =>
        Effect.sync(() => {
          if (Option.isNone(snapshot)) return
          for (const listener of registry.byInvoice.get(invoiceId) ?? []) send(listener, snapshot.value)
        }))
    const changes = yield* bus.attach
    yield* Queue.takeAll(changes).pipe(
      Effect.flatMap((ids) => Effect.forEach(new Set(ids.filter((id) => registry.byInvoice.has(id))), refresh, { concurrency: 8, discard: true })),
      Effect.catchCause((cause) => Effect.logWarning("Status stream refresh failed", cause)),
      Effect.forever,
      Effect.forkScoped
    )
    yield* Effect.sleep(Duration.millis(settings.heartbeatMs)).pipe(
      Effect.andThen(Effect.sync(() => {
        for (const listeners of registry.byInvoice.values()) for (const listener of listeners) Queue.offerUnsafe(listener.queue, HEARTBEAT)
      })),
      Effect.forever,
      Effect.forkScoped
    )
  })

/**
 * Server-Sent Events of the public status of invoices. One reader per instance feeds every open
 * stream: a change read once is sent to all streams of that invoice; a heartbeat comment goes to
 * all streams from one timer. An idle stream holds a small queue and a listener entry, no timer
 * of its own.
 */
export class StatusStream extends Context.Service<StatusStream, {
  /** The stream's HTTP answer: 200 text/event-stream, or 204 when the client already holds the final state. */
  readonly open: (
    invoiceId: string,
    lastEventId: string | undefined,
    client: string
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse, InvoiceNotFound | StreamLimitReached>
  /** Streams open on this instance. */
  readonly openStreams: () => number
}>()("Invoices/StatusStream") {
  static readonly layer = Layer.effect(
    StatusStream,
    Effect.gen(function*() {
      const invoices = yield* Invoices
      const bus = yield* InvoiceChanges
      const settings = yield* StatusStreamSettings
      const registry = makeRegistry()
      let tickets = 0
      const read = (invoiceId: string) =>
        Effect.suspend(() => {
          const ticket = ++tickets
          return Effect.map(Effect.all([invoices.getPublic(invoiceId), Clock.currentTimeMillis]), ([parts, millis]) => snapshotOf(parts, ticket, new Date(millis)))
        })
      yield* forwardChanges(registry, bus, read)
      yield* listenToOtherInstances(registry, bus)

      /**
       * The body, run by the server once the answer's head is written: registered before the state
       * is sent, and the state read again only if a change was published since the request read
       * it. The server interrupts it when the client goes, which unregisters it.
       */
      const body = (invoiceId: string, lastEventId: string | undefined, client: string, read0: Snapshot, published: number) => {
        // The body lives as long as the stream: it must not keep the first status (some kB) after sending it.
        let first: Snapshot | undefined = read0
        return Stream.callback<Uint8Array>((queue) =>
          Effect.gen(function*() {
            Queue.offerUnsafe(queue, RETRY)
            // Checked again here: concurrent requests of one client may all have passed the request's check.
            if (registry.heldBy(client) >= settings.maxPerClient) return Queue.endUnsafe(queue)
            const listener: Listener = { last: lastEventId, ticket: 0, client, queue }
            yield* Effect.acquireRelease(Effect.sync(() => registry.register(invoiceId, listener)), () => Effect.sync(() => registry.unregister(invoiceId, listener)))
            const held = first
            first = undefined
            send(listener, held !== undefined && bus.published() === published ? held : yield* read(invoiceId))
          }).pipe(Effect.catchTag("InvoiceNotFound", () => Effect.sync(() => Queue.endUnsafe(queue)))), { bufferSize: BUFFERED_CHUNKS, strategy: "sliding" })
      }

      return {
        openStreams: registry.openStreams,
        open: (invoiceId, lastEventId, client) =>
          Effect.gen(function*() {
            if (registry.heldBy(client) >= settings.maxPerClient) return yield* new StreamLimitReached({ max: settings.maxPerClient })
            const published = bus.published()
            const snapshot = yield* read(invoiceId)
            // The client holds the final state already: 204 tells EventSource not to reconnect.
            if (snapshot.final && snapshot.id === lastEventId) return HttpServerResponse.empty({ status: 204 })
            return HttpServerResponse.stream(body(invoiceId, lastEventId, client, snapshot, published), {
              contentType: "text/event-stream",
              headers: { "cache-control": "no-cache, no-transform", "x-accel-buffering": "no" }
            })
          }).pipe(Effect.withSpan("StatusStream.open"))
      }
    })
  ).pipe(Layer.provide([Invoices.layer, InvoiceChanges.layer]))
}
