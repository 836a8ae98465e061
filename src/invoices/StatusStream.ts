import { createHash } from "node:crypto"
import { PgClient } from "@effect/sql-pg"
import { type Cause, Clock, Context, Data, Duration, Effect, Layer, Option, Queue, Schedule, Stream } from "effect"
import { HttpServerResponse } from "effect/http"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../config/AppConfig.ts"
import type { InvoiceNotFound } from "../domain/Errors.ts"
import { publicStatusView } from "../domain/InvoiceViews.ts"
import { InvoiceRepo } from "./InvoiceRepo.ts"
import { Invoices } from "./Invoices.ts"

/** The channel the outbox trigger notifies at each commit that wrote events (migration 0012). */
const OUTBOX_CHANNEL = "checkout_outbox"

/**
 * Statuses after which the payer page needs no more updates: the same set the page stops polling
 * at. `expired` and `voided` can still change by a merchant's decision (a late payment accepted),
 * which the page shows on its next load, not live.
 */
export const FINAL_STREAM_STATUSES: ReadonlySet<string> = new Set(["confirmed", "paid_out_of_band", "expired", "voided"])

/** Settings of the status streams; a Reference so that tests can shorten the heartbeat. */
export const StatusStreamSettings = Context.Reference<{
  /** A comment line this often keeps proxies and load balancers from closing an idle stream. */
  readonly heartbeatMs: number
  /** Open streams one client address may hold on one instance; more answer 429. */
  readonly maxPerClient: number
}>("Invoices/StatusStreamSettings", { defaultValue: () => ({ heartbeatMs: 15_000, maxPerClient: 16 }) })

/** The per-address cap on open streams was reached. */
export class StreamLimitReached extends Data.TaggedError("StreamLimitReached")<{ readonly max: number }> {}

/** Which invoices' rows are in-process changes: set while a repository transaction runs, published once it commits. */
const PendingChanges = Context.Reference<Set<string> | undefined>("Invoices/PendingChanges", { defaultValue: () => undefined })

/**
 * The in-process bus of invoice changes: every write of an invoice by this process (status,
 * payments, confirmations) is published once it has committed; on a PostgreSQL server the status
 * streams also hear other instances' changes through the outbox's NOTIFY. Nothing is queued until
 * a consumer (the status streams) has attached.
 */
export class InvoiceChanges extends Context.Service<InvoiceChanges, {
  readonly publish: (invoiceId: string) => void
  /** How many changes were published so far: a reader compares it before and after to know whether it may have missed one. */
  readonly published: () => number
  /** The changed invoice ids, for the one consumer of this process. */
  readonly attach: Effect.Effect<Queue.Dequeue<string>>
}>()("Invoices/InvoiceChanges") {
  static readonly layer = Layer.effect(
    InvoiceChanges,
    Effect.gen(function*() {
      const changes = yield* Queue.unbounded<string>()
      let attached = false
      let published = 0
      return {
        publish: (invoiceId) => {
          published++
          if (attached) Queue.offerUnsafe(changes, invoiceId)
        },
        published: () => published,
        attach: Effect.sync(() => {
          attached = true
          return changes
        })
      }
    })
  )

  /**
   * The invoice repository whose writes publish on the bus: after the transaction they ran in has
   * committed (a reader then sees them), or at once outside a transaction.
   */
  static readonly publishingRepo = Layer.effect(
    InvoiceRepo,
    Effect.gen(function*() {
      const repo = yield* InvoiceRepo
      const bus = yield* InvoiceChanges
      const changed = (invoiceId: string) =>
        Effect.gen(function*() {
          const pending = yield* PendingChanges
          if (pending === undefined) bus.publish(invoiceId)
          else pending.add(invoiceId)
        })
      return InvoiceRepo.of({
        ...repo,
        save: (invoice, events) => Effect.tap(repo.save(invoice, events), () => changed(invoice.id)),
        saveWith: (write, invoice, events) => Effect.tap(repo.saveWith(write, invoice, events), () => changed(invoice.id)),
        saveIfUnchanged: (version, write, invoice, events) =>
          Effect.tap(repo.saveIfUnchanged(version, write, invoice, events), (applied) => (applied ? changed(invoice.id) : Effect.void)),
        withTransaction: (effect) =>
          Effect.gen(function*() {
            if ((yield* PendingChanges) !== undefined) return yield* repo.withTransaction(effect)
            const pending = new Set<string>()
            const result = yield* repo.withTransaction(Effect.provideService(effect, PendingChanges, pending))
            pending.forEach(bus.publish)
            return result
          })
      })
    })
  ).pipe(Layer.provide(InvoiceRepo.layer))
}

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
/** Outbox rows one read of its tail takes; a full read is followed by another. */
const TAIL_BATCH = 1_000
/** An outbox id still missing after this long was rolled back (sequences have gaps): skipped. */
const GAP_WAIT_MS = 30_000

/** The event id: a digest of the status as sent, so "changed since Last-Event-ID" is a comparison. */
const versionOf = (json: string) => createHash("sha256").update(json).digest("base64url").slice(0, 22)

/**
 * Chunks a stream holds for a client that does not read; beyond, the oldest go (each is a whole
 * event or heartbeat, and the newest status is what counts).
 */
const BUFFERED_CHUNKS = 16

/** `ticket` orders reads: a read started later saw a state at least as new, so an older one is never sent after it. */
const snapshotOf = (parts: Effect.Success<ReturnType<Invoices["Service"]["getPublic"]>>, ticket: number) => {
  const view = publicStatusView(parts)
  const json = JSON.stringify(view)
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
      const sql = yield* SqlClient.SqlClient
      const config = yield* AppConfig
      const settings = yield* StatusStreamSettings
      const byInvoice = new Map<string, Set<Listener>>()
      const perClient = new Map<string, number>()
      let open = 0

      const write = (listener: Listener, chunk: Uint8Array) => Queue.offerUnsafe(listener.queue, chunk)
      const send = (listener: Listener, snapshot: Snapshot) => {
        if (snapshot.ticket <= listener.ticket) return
        listener.ticket = snapshot.ticket
        if (listener.last !== snapshot.id) {
          listener.last = snapshot.id
          write(listener, eventChunk(snapshot))
        }
        if (snapshot.final) Queue.endUnsafe(listener.queue)
      }

      let tickets = 0
      const read = (invoiceId: string) =>
        Effect.suspend(() => {
          const ticket = ++tickets
          return Effect.map(invoices.getPublic(invoiceId), (parts) => snapshotOf(parts, ticket))
        })

      /** Reads the invoice once and sends the new status to every stream of it that has not seen it. */
      const refresh = (invoiceId: string) =>
        Effect.flatMap(Effect.option(read(invoiceId)), (snapshot) =>
          Effect.sync(() => {
            if (Option.isNone(snapshot)) return
            for (const listener of byInvoice.get(invoiceId) ?? []) send(listener, snapshot.value)
          }))

      const changes = yield* bus.attach
      yield* Queue.takeAll(changes).pipe(
        Effect.flatMap((ids) => Effect.forEach(new Set(ids.filter((id) => byInvoice.has(id))), refresh, { concurrency: 8, discard: true })),
        Effect.catchCause((cause) => Effect.logWarning("Status stream refresh failed", cause)),
        Effect.forever,
        Effect.forkScoped
      )

      yield* Effect.sleep(Duration.millis(settings.heartbeatMs)).pipe(
        Effect.andThen(Effect.sync(() => {
          for (const listeners of byInvoice.values()) for (const listener of listeners) write(listener, HEARTBEAT)
        })),
        Effect.forever,
        Effect.forkScoped
      )

      // Other instances' changes: one LISTEN per instance on the outbox's channel, then the new
      // outbox rows name the invoices. The tail resumes where it was after a lost connection.
      const pg = config.databaseUrl === undefined ? Option.none() : yield* Effect.serviceOption(PgClient.PgClient)
      if (Option.isSome(pg)) {
        // Every id up to `low` is handled; above it, `seen` holds those handled while a lower one is
        // missing (ids commit out of order: a missing one may still commit, its NOTIFY bringing it,
        // or was rolled back and never will: it is given up after GAP_WAIT_MS). Both are read from
        // the outbox by the first listen, not at start: a database that is down must not stop the
        // service from starting (it answers 503 until the database answers).
        let low = -1n
        let high = -1n
        const start = Effect.gen(function*() {
          if (low >= 0n) return
          const [{ top }] = yield* sql<{ readonly top: string }>`SELECT COALESCE(max(id), 0)::text AS top FROM outbox`.pipe(Effect.orDie)
          low = BigInt(top)
          high = low
        })
        const seen = new Set<bigint>()
        let gapSince: number | undefined
        const take = (rows: ReadonlyArray<{ readonly id: string; readonly invoiceId: string }>) => {
          for (const row of rows) {
            const id = BigInt(row.id)
            if (id <= low || seen.has(id)) continue
            seen.add(id)
            if (id > high) high = id
            bus.publish(row.invoiceId)
          }
        }
        const tail: Effect.Effect<void> = Effect.gen(function*() {
          if (high > low) {
            take(yield* sql<{ readonly id: string; readonly invoiceId: string }>`SELECT id::text AS id, invoice_id FROM outbox
              WHERE id > ${low.toString()}::bigint AND id <= ${high.toString()}::bigint AND id <> ALL(${[...seen].map(String)}::bigint[])`.pipe(Effect.orDie))
          }
          const rows = yield* sql<{ readonly id: string; readonly invoiceId: string }>`SELECT id::text AS id, invoice_id FROM outbox
            WHERE id > ${high.toString()}::bigint ORDER BY id LIMIT ${TAIL_BATCH}`.pipe(Effect.orDie)
          take(rows)
          const now = yield* Clock.currentTimeMillis
          while (low < high) {
            if (seen.delete(low + 1n)) {
              low++
              gapSince = undefined
            } else if (gapSince === undefined) {
              gapSince = now
              break
            } else if (now - gapSince > GAP_WAIT_MS) {
              low++
              gapSince = undefined
            } else break
          }
          if (rows.length === TAIL_BATCH) yield* tail
        })
        const listen = Effect.scoped(Effect.gen(function*() {
          const notifications = yield* pg.value.listen(OUTBOX_CHANNEL)
          yield* start
          yield* tail
          while (true) {
            yield* Queue.takeAll(notifications)
            yield* tail
          }
        }))
        yield* listen.pipe(
          Effect.catchCause((cause) => Effect.logWarning("Status stream listener stopped; listening again", cause)),
          Effect.repeat(Schedule.spaced(Duration.seconds(1))),
          Effect.forkScoped
        )
      }

      const register = (invoiceId: string, listener: Listener) => {
        let listeners = byInvoice.get(invoiceId)
        if (listeners === undefined) byInvoice.set(invoiceId, listeners = new Set())
        listeners.add(listener)
        perClient.set(listener.client, (perClient.get(listener.client) ?? 0) + 1)
        open++
      }
      const unregister = (invoiceId: string, listener: Listener) => {
        const listeners = byInvoice.get(invoiceId)
        if (listeners?.delete(listener) !== true) return
        if (listeners.size === 0) byInvoice.delete(invoiceId)
        const count = (perClient.get(listener.client) ?? 1) - 1
        if (count === 0) perClient.delete(listener.client)
        else perClient.set(listener.client, count)
        open--
      }

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
            if ((perClient.get(client) ?? 0) >= settings.maxPerClient) return Queue.endUnsafe(queue)
            const listener: Listener = { last: lastEventId, ticket: 0, client, queue }
            yield* Effect.acquireRelease(Effect.sync(() => register(invoiceId, listener)), () => Effect.sync(() => unregister(invoiceId, listener)))
            const held = first
            first = undefined
            send(listener, held !== undefined && bus.published() === published ? held : yield* read(invoiceId))
          }).pipe(Effect.catchTag("InvoiceNotFound", () => Effect.sync(() => Queue.endUnsafe(queue)))), { bufferSize: BUFFERED_CHUNKS, strategy: "sliding" })
      }

      return {
        openStreams: () => open,
        open: (invoiceId, lastEventId, client) =>
          Effect.gen(function*() {
            if ((perClient.get(client) ?? 0) >= settings.maxPerClient) return yield* new StreamLimitReached({ max: settings.maxPerClient })
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
  )
}
