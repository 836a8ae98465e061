import { Context, Effect, Layer, Queue } from "effect"
import { EvidenceRepo } from "./EvidenceRepo.ts"
import { InvoiceRepo } from "./InvoiceRepo.ts"

/** Which invoices' rows are in-process changes: set while a repository transaction runs, published once it commits. */
const PendingChanges = Context.Reference<Set<string> | undefined>("Invoices/PendingChanges", { defaultValue: () => undefined })

/**
 * The in-process bus of invoice changes: every write of an invoice by this process (status,
 * payments, confirmations) is published once it has committed; on a PostgreSQL server the status
 * streams also hear other instances' changes through a NOTIFY of each changed invoice. Nothing is queued until
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
   * committed (a reader then sees them), or at once outside a transaction. The one `InvoiceRepo` the
   * services are given: with the repository and the bus (one instance of each per application: a
   * layer provided in several places is built once, memoized by reference).
   */
  static readonly publishingRepo = Layer.effect(
    InvoiceRepo,
    Effect.gen(function*() {
      const repo = yield* InvoiceRepo
      const { changed, withTransaction } = publishing(yield* InvoiceChanges, repo.withTransaction)
      return InvoiceRepo.of({
        ...repo,
        save: (invoice, events) => Effect.tap(repo.save(invoice, events), () => changed(invoice.id)),
        withTransaction
      })
    })
  ).pipe(Layer.provide([InvoiceRepo.layer, InvoiceChanges.layer]))

  /** The evidence repository whose payment writes publish on the bus, as `publishingRepo`'s. */
  static readonly publishingEvidenceRepo = Layer.effect(
    EvidenceRepo,
    Effect.gen(function*() {
      const repo = yield* EvidenceRepo
      const { changed, withTransaction } = publishing(yield* InvoiceChanges, repo.withTransaction)
      return EvidenceRepo.of({
        ...repo,
        saveWith: (write, invoice, events) => Effect.tap(repo.saveWith(write, invoice, events), () => changed(invoice.id)),
        saveIfUnchanged: (version, write, invoice, events) =>
          Effect.tap(repo.saveIfUnchanged(version, write, invoice, events), (applied) => (applied ? changed(invoice.id) : Effect.void)),
        withTransaction
      })
    })
  ).pipe(Layer.provide([EvidenceRepo.layer, InvoiceChanges.layer]))
}

type Transaction = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/**
 * A change is published at once outside a transaction, or collected and published when the
 * outermost transaction (of either repository: they share the set) has committed.
 */
const publishing = (bus: InvoiceChanges["Service"], transaction: Transaction) => ({
  changed: (invoiceId: string) =>
    Effect.gen(function*() {
      const pending = yield* PendingChanges
      if (pending === undefined) bus.publish(invoiceId)
      else pending.add(invoiceId)
    }),
  withTransaction: (<A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.gen(function*() {
      if ((yield* PendingChanges) !== undefined) return yield* transaction(effect)
      const pending = new Set<string>()
      const result = yield* transaction(Effect.provideService(effect, PendingChanges, pending))
      pending.forEach(bus.publish)
      return result
    })) as Transaction
})
