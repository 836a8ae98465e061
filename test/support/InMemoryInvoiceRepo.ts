import { Context, Effect, Exit, Layer, Option, Semaphore } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient, Statement } from "effect/sql"
import { BillingGate } from "../../src/accounts/BillingGate.ts"
import { AppConfig, parseConfig } from "../../src/config/AppConfig.ts"
import type { InvoiceRecord, OutboxEvent, PaymentRecord } from "../../src/domain/Invoice.ts"
import type { PaymentTimingInput } from "../../src/domain/Timing.ts"
import { InvoiceExpiry } from "../../src/expiry/InvoiceExpiry.ts"
import { MerchantId } from "../../src/domain/Ids.ts"
import { type EvidenceOption, type EvidenceState, EvidenceRepo } from "../../src/invoices/EvidenceRepo.ts"
import { ExpiryRepo } from "../../src/invoices/ExpiryRepo.ts"
import { type InvoiceParts, InvoiceRepo, type NewOption } from "../../src/invoices/InvoiceRepo.ts"
import { OptionPlanner } from "../../src/payments/OptionPlanner.ts"
import { Invoices } from "../../src/invoices/Invoices.ts"
import { EvidenceFollowUp } from "../../src/invoices/EvidenceFollowUp.ts"
import { PaymentEvidence } from "../../src/invoices/PaymentEvidence.ts"
import type { PaymentWrite } from "../../src/invoices/PaymentWrite.ts"
import { statusesAccepting } from "../../src/lifecycle/Lifecycle.ts"
import { BitcoinAddressPool } from "../../src/payments/BitcoinAddressPool.ts"
import { type CheckoutSettings, CheckoutSettingsRepo, type MethodInput } from "../../src/payments/CheckoutSettingsRepo.ts"
import { makePaymentWorker, PaymentWorker } from "../../src/payments/PaymentWorker.ts"
import { PriceOracle } from "../../src/payments/PriceOracle.ts"
import { railSettingsOf, RailSettings } from "../../src/payments/RailSettings.ts"

/**
 * A second implementation of the repositories the invoice lifecycle needs (InvoiceRepo,
 * EvidenceRepo, ExpiryRepo, CheckoutSettingsRepo, and the chain times the deadline sweeper reads through ChainRepo), in
 * memory, so that the real services (Invoices, PaymentEvidence, InvoiceExpiry) run thousands of
 * command sequences per test run. It keeps the SQL implementation's contract: transactions are
 * serialised and roll back on failure; `saveIfUnchanged` applies only at the version read and
 * while no transaction holds the invoice; a payment write that touches no row saves nothing.
 */

interface StoredInvoice {
  invoice: InvoiceRecord
  version: number
  readonly options: ReadonlyArray<NewOption>
}

interface StoredPayment {
  readonly payment: PaymentRecord
  readonly reorgPoint: bigint | null
}

interface Tables {
  invoices: Map<string, StoredInvoice>
  payments: Map<string, StoredPayment>
  outbox: Array<OutboxEvent>
}

const copyTables = (tables: Tables): Tables => ({
  invoices: new Map([...tables.invoices].map(([id, stored]) => [id, { ...stored }])),
  payments: new Map(tables.payments),
  outbox: [...tables.outbox]
})

/** The in-memory database: tables, chain cursors, and the controls a test needs. */
export class InMemoryStore extends Context.Service<InMemoryStore, {
  readonly tables: () => Tables
  readonly replace: (tables: Tables) => void
  /** Empties the tables (between property runs). */
  readonly reset: Effect.Effect<void>
  readonly outboxOf: (invoiceId: string) => Effect.Effect<ReadonlyArray<string>>
  /** The chain time a network's watcher has processed (null: nothing yet), as chain_cursors holds it. */
  readonly setChainTime: (network: string, chainTime: Date | null) => Effect.Effect<void>
  readonly chainTime: (network: string) => Date | null | undefined
  readonly settings: Map<string, CheckoutSettings>
}>()("test/InMemoryStore") {
  static readonly layer = Layer.sync(InMemoryStore, () => {
    let tables: Tables = { invoices: new Map(), payments: new Map(), outbox: [] }
    const chainTimes = new Map<string, Date | null>()
    return {
      tables: () => tables,
      replace: (next) => {
        tables = next
      },
      reset: Effect.sync(() => {
        tables = { invoices: new Map(), payments: new Map(), outbox: [] }
      }),
      outboxOf: (invoiceId) => Effect.sync(() => tables.outbox.filter((event) => event.invoiceId === invoiceId).map((event) => event.event)),
      setChainTime: (network, chainTime) => Effect.sync(() => void chainTimes.set(network, chainTime)),
      chainTime: (network) => chainTimes.get(network),
      settings: new Map()
    }
  })
}

/** Set while a fiber runs inside `withTransaction`: nested calls join it. */
const InTransaction = Context.Reference<boolean>("test/InMemoryInvoiceRepo/InTransaction", { defaultValue: () => false })

const byObservation = (a: PaymentRecord, b: PaymentRecord) => a.observedAt.getTime() - b.observedAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/**
 * What the three invoice repositories share over the store, as the SQL ones share the database:
 * one transaction at a time (rolled back on failure) and the invoices its locks hold.
 */
class InMemoryInvoiceTables extends Context.Service<InMemoryInvoiceTables, {
  readonly store: InMemoryStore["Service"]
  /** Invoices locked by the running transaction (FOR UPDATE). */
  readonly locked: Set<string>
  readonly withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly paymentsOf: (invoiceId: string) => Array<PaymentRecord>
  readonly lockForUpdate: (id: string) => Effect.Effect<Option.Option<InvoiceRecord>>
  readonly saveInvoice: (invoice: InvoiceRecord, events: ReadonlyArray<OutboxEvent>) => void
}>()("test/InMemoryInvoiceTables") {
  static readonly layer = Layer.effect(
    InMemoryInvoiceTables,
    Effect.gen(function*() {
      const store = yield* InMemoryStore
      const transactions = yield* Semaphore.make(1)
      const locked = new Set<string>()
      const withTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
        Effect.flatMap(Effect.service(InTransaction), (inside) =>
          inside ? effect : transactions.withPermits(1)(
            Effect.suspend(() => {
              const before = copyTables(store.tables())
              return effect.pipe(
                Effect.provideService(InTransaction, true),
                Effect.onExit((exit) =>
                  Effect.sync(() => {
                    locked.clear()
                    if (Exit.isFailure(exit)) store.replace(before)
                  })
                )
              )
            })
          ))
      return {
        store,
        locked,
        withTransaction,
        paymentsOf: (invoiceId) => [...store.tables().payments.values()].map((stored) => stored.payment).filter((payment) => payment.invoiceId === invoiceId).sort(byObservation),
        lockForUpdate: (id) =>
          Effect.sync(() => {
            const stored = store.tables().invoices.get(id)
            if (stored !== undefined) locked.add(id)
            return Option.fromNullishOr(stored?.invoice)
          }),
        saveInvoice: (invoice, events) => {
          const stored = store.tables().invoices.get(invoice.id)
          if (stored === undefined) return
          stored.invoice = invoice
          stored.version += 1
          store.tables().outbox.push(...events)
        }
      }
    })
  )
}

/** The merchant's repository in memory. */
export const InMemoryInvoiceRepo = Layer.effect(
  InvoiceRepo,
  Effect.gen(function*() {
    const { locked, lockForUpdate, paymentsOf, saveInvoice, store, withTransaction } = yield* InMemoryInvoiceTables
    const partsOf = (id: string): Option.Option<InvoiceParts> => {
      const stored = store.tables().invoices.get(id)
      if (stored === undefined) return Option.none()
      const options = [...stored.options].sort((a, b) => a.position - b.position)
        .map(({ position: _position, reference: _reference, derivationIndex: _index, ...option }) => option)
      return Option.some({ invoice: stored.invoice, options, payments: paymentsOf(id) })
    }
    return {
      withTransaction,
      insert: (invoice, options, events) =>
        Effect.sync(() => {
          store.tables().invoices.set(invoice.id, { invoice, version: 0, options })
          store.tables().outbox.push(...events)
        }),
      find: (id) => Effect.sync(() => partsOf(id)),
      lockParts: (id) =>
        Effect.sync(() => {
          const parts = partsOf(id)
          if (Option.isSome(parts)) locked.add(id)
          return parts
        }),
      lockForUpdate,
      findInvoices: (ids) =>
        Effect.sync(() =>
          new Map(ids.flatMap((id) => {
            const stored = store.tables().invoices.get(id)
            return stored === undefined ? [] : [[id, stored.invoice] as const]
          }))
        ),
      save: (invoice, events) => Effect.sync(() => saveInvoice(invoice, events))
    }
  })
)

/** The evidence's repository in memory: `saveIfUnchanged` applies only at the version read and while no transaction holds the invoice. */
export const InMemoryEvidenceRepo = Layer.effect(
  EvidenceRepo,
  Effect.gen(function*() {
    const { locked, lockForUpdate, paymentsOf, saveInvoice, store, withTransaction } = yield* InMemoryInvoiceTables

    const evidenceOption = (option: NewOption): EvidenceOption => ({
      id: option.id,
      network: option.network,
      assetCode: option.assetCode,
      decimals: option.decimals,
      quotedAtomic: option.quotedAtomic,
      destinationAddress: option.destinationAddress,
      requiredConfirmations: option.requiredConfirmations,
      railType: option.railType
    })

    const evidenceState = (optionId: string): Option.Option<EvidenceState> => {
      for (const stored of store.tables().invoices.values()) {
        const option = stored.options.find((candidate) => candidate.id === optionId)
        if (option !== undefined) {
          return Option.some({ invoice: stored.invoice, option: evidenceOption(option), payments: paymentsOf(stored.invoice.id), version: String(stored.version) })
        }
      }
      return Option.none()
    }

    const findPayment = (network: string, transactionHash: string, outputIndex: number) =>
      Option.fromNullishOr(
        [...store.tables().payments.values()].find(({ payment }) =>
          payment.network === network && payment.transactionHash === transactionHash && payment.outputIndex === outputIndex
        )
      )

    /** Applies a payment write; how many rows it touched (the SQL's RETURNING 1). */
    const applyWrite = (write: PaymentWrite): number => {
      const payments = store.tables().payments
      switch (write._tag) {
        case "InsertPayment": {
          const { payment } = write
          if (payment.transactionHash !== null && Option.isSome(findPayment(payment.network, payment.transactionHash, payment.outputIndex))) return 0
          payments.set(payment.id, { payment, reorgPoint: null })
          return 1
        }
        case "UpdateConfirmations": {
          const stored = payments.get(write.paymentId)
          if (stored === undefined) return 0
          payments.set(write.paymentId, {
            payment: { ...stored.payment, confirmations: write.confirmations, confirmedAt: write.confirmedAt, invalidatedAt: null, invalidationReason: null },
            reorgPoint: null
          })
          return 1
        }
        case "InvalidatePayment": {
          const stored = payments.get(write.paymentId)
          if (stored === undefined) return 0
          payments.set(write.paymentId, { payment: { ...stored.payment, invalidatedAt: write.at, invalidationReason: write.reason }, reorgPoint: write.reorgPoint })
          return 1
        }
        case "SettleReorg": {
          const stored = payments.get(write.paymentId)
          if (stored === undefined || stored.reorgPoint === null) return 0
          payments.set(write.paymentId, { ...stored, reorgPoint: null })
          return 1
        }
      }
    }

    const saveWith = (write: PaymentWrite, invoice: InvoiceRecord, events: ReadonlyArray<OutboxEvent>) =>
      Effect.sync(() => {
        const written = applyWrite(write)
        if (written === 1) saveInvoice(invoice, events)
        return written
      })

    return {
      withTransaction,
      // The unlocked read yields, so that concurrent evidence interleaves between read and write.
      readForEvidence: (optionId) => Effect.sync(() => evidenceState(optionId)).pipe(Effect.tap(() => Effect.yieldNow)),
      lockForEvidence: (optionId) =>
        Effect.sync(() => {
          const state = evidenceState(optionId)
          if (Option.isSome(state)) locked.add(state.value.invoice.id)
          return state
        }),
      lockForUpdate,
      saveWith,
      saveIfUnchanged: (version, write, invoice, events) =>
        Effect.suspend(() => {
          const stored = store.tables().invoices.get(invoice.id)
          if (stored === undefined || String(stored.version) !== version || locked.has(invoice.id)) return Effect.succeed(false)
          return Effect.map(saveWith(write, invoice, events), (written) => written === 1)
        }),
      lockPayment: (network, transactionHash, outputIndex) => Effect.sync(() => Option.map(findPayment(network, transactionHash, outputIndex), ({ payment }) => payment)),
      invoiceIdOfPayment: (network, transactionHash, outputIndex) =>
        Effect.sync(() => Option.map(findPayment(network, transactionHash, outputIndex), ({ payment }) => payment.invoiceId as string)),
      listPayments: (invoiceId) => Effect.sync(() => paymentsOf(invoiceId))
    }
  })
)

/** The deadline's claims in memory. */
export const InMemoryExpiryRepo = Layer.effect(
  ExpiryRepo,
  Effect.gen(function*() {
    const { locked, store } = yield* InMemoryInvoiceTables
    const expirable = new Set<string>(statusesAccepting({ type: "DEADLINE_PASSED" }))
    return {
      claimDueForExpiry: (now, batchSize, watched) =>
        Effect.sync(() => {
          const progress = new Map(watched.map(({ chainTime, livemode, network }) => [`${network}:${livemode}`, chainTime]))
          const due = [...store.tables().invoices.values()].filter(({ invoice, options }) => {
            if (!expirable.has(invoice.status) || !(invoice.timing.payableUntilAt.getTime() < now.getTime()) || locked.has(invoice.id)) return false
            return options.every((option) => {
              const key = `${option.network}:${invoice.livemode}`
              if (!progress.has(key)) return true
              const chainTime = progress.get(key)
              return chainTime !== null && chainTime !== undefined && chainTime.getTime() >= invoice.timing.payableUntilAt.getTime()
            })
          }).sort((a, b) => a.invoice.timing.payableUntilAt.getTime() - b.invoice.timing.payableUntilAt.getTime()).slice(0, batchSize)
          for (const { invoice } of due) locked.add(invoice.id)
          return due.map(({ invoice }) => invoice)
        })
    }
  })
)

/** The three invoice repositories over one store and one transaction lock. */
export const InMemoryInvoiceRepos = Layer.mergeAll(InMemoryInvoiceRepo, InMemoryEvidenceRepo, InMemoryExpiryRepo).pipe(Layer.provide(InMemoryInvoiceTables.layer))

/** Checkout settings in memory; `methods` get ids and positions as the SQL repository gives them. */
export const InMemoryCheckoutSettingsRepo = Layer.effect(
  CheckoutSettingsRepo,
  Effect.gen(function*() {
    const store = yield* InMemoryStore
    const counters = new Map<string, number>()
    return {
      // Keyed by merchant and mode; a test read falls back to the live settings, as the SQL repository's does.
      find: (merchantId, livemode) =>
        Effect.sync(() =>
          store.settings.get(`${merchantId}:${livemode}`) ?? store.settings.get(`${merchantId}:true`) ??
            { merchantId, livemode, configured: false, issuedBy: null, timing: { mode: "immediate", expiresAfterMinutes: 60 }, methods: [], embedOrigins: [] }
        ),
      save: (merchantId, livemode, settings) =>
        Effect.sync(() => {
          const key = `${merchantId}:${livemode}`
          store.settings.set(key, {
            merchantId,
            livemode,
            configured: true,
            issuedBy: settings.issuedBy,
            timing: settings.timing,
            methods: settings.methods.map((method, position) => ({ ...method, id: `${merchantId}:${position}`, position })),
            embedOrigins: settings.embedOrigins ?? store.settings.get(key)?.embedOrigins ?? []
          })
        }),
      embedOriginsOfInvoice: () => Effect.succeed([]),
      reserveIndexes: (methods) =>
        Effect.sync(() =>
          new Map(methods.map((method) => {
            const next = counters.get(method.xpub) ?? 0
            counters.set(method.xpub, next + 1)
            return [method.id, next] as const
          }))
        )
    }
  })
)

/**
 * Invoice expiry's layer brings the SQL ChainRepo with it; this client answers its one
 * statement (the watchers' chain times from chain_cursors) from the store, and refuses any other.
 */
const ChainTimesSqlClient = Layer.effect(
  SqlClient.SqlClient,
  Effect.gen(function*() {
    const store = yield* InMemoryStore
    const execute = (sql: string, params: ReadonlyArray<unknown>) =>
      sql.includes("chain_cursors")
        ? Effect.succeed(params.flatMap((network) => {
          const chainTime = store.chainTime(String(network))
          return chainTime === undefined ? [] : [{ network: String(network), chainTime }]
        }))
        : Effect.die(new Error(`the in-memory repositories do not run SQL: ${sql}`))
    const connection = {
      execute: (sql: string, params: ReadonlyArray<unknown>) => execute(sql, params),
      executeRaw: (sql: string, params: ReadonlyArray<unknown>) => execute(sql, params),
      executeStream: () => Effect.die(new Error("no streams in memory")) as never,
      executeValues: (sql: string, params: ReadonlyArray<unknown>) => execute(sql, params).pipe(Effect.map((rows) => rows.map((row) => Object.values(row)))),
      executeValuesUnprepared: (sql: string, params: ReadonlyArray<unknown>) => execute(sql, params).pipe(Effect.map((rows) => rows.map((row) => Object.values(row)))),
      executeUnprepared: (sql: string, params: ReadonlyArray<unknown>) => execute(sql, params)
    }
    return yield* SqlClient.make({
      acquirer: Effect.succeed(connection),
      compiler: Statement.makeCompilerSqlite(),
      driver: "in-memory",
      spanAttributes: []
    })
  })
).pipe(Layer.provide(Reactivity.layer))

/** A stablecoin checkout on two EVM wallet-contract options: no key derivation, no bitcoin pool. */
export const IN_MEMORY_METHODS: ReadonlyArray<MethodInput> = [
  { network: "ethereum", assetCode: "USDC", railType: "wallet_contract", enabled: true, isDefault: true, recipientAddress: "0x1111111111111111111111111111111111111111",
    xpub: null },
  { network: "base", assetCode: "USDC", railType: "wallet_contract", enabled: true, isDefault: false, recipientAddress: "0x1111111111111111111111111111111111111111", xpub: null }
]

export const IN_MEMORY_MERCHANT = MerchantId.make("00000000-0000-4000-8000-000000000001")

export interface InMemoryOptions {
  /** Networks whose watcher holds the sweeper back until its chain time reaches a deadline. */
  readonly watched?: ReadonlyArray<"ethereum" | "base">
  readonly timing?: PaymentTimingInput
}

/**
 * Invoices, PaymentEvidence and InvoiceExpiry (the real services) over the in-memory
 * repositories, with a merchant (IN_MEMORY_MERCHANT) whose settings are saved already.
 */
export const inMemoryServices = (options: InMemoryOptions = {}) => {
  const env = {
    CHECKOUT_ENV: "test",
    CHECKOUT_DATA_DIR: "memory://",
    ...Object.fromEntries((options.watched ?? []).map((network) => [`CHECKOUT_RPC_URL_${network.toUpperCase()}`, "http://127.0.0.1:1"]))
  }
  const config = { ...parseConfig(env), paymentWorkerThreads: 0 }
  const repositories = Layer.mergeAll(InMemoryInvoiceRepos, InMemoryCheckoutSettingsRepo)
  const infrastructure = Layer.mergeAll(
    repositories,
    ChainTimesSqlClient,
    Layer.succeed(AppConfig, config),
    PriceOracle.fixed(),
    RailSettings.make(railSettingsOf(config.rails, config.servicePrefix, false)),
    Layer.succeed(PaymentWorker, makePaymentWorker([])),
    Layer.succeed(BitcoinAddressPool, {
      take: () => Effect.succeed(undefined),
      refill: () => Effect.succeed(0),
      refillAll: Effect.void
    }),
    BillingGate.accountState
  )
  const merchant = Layer.effectDiscard(
    Effect.flatMap(CheckoutSettingsRepo,
      (settings) =>
        settings.save(IN_MEMORY_MERCHANT, true, { issuedBy: "Test Store", timing: options.timing ?? { mode: "immediate", expiresAfterMinutes: 60 }, methods: IN_MEMORY_METHODS }))
  )
  // The real services without the dependencies they bring (`layerWithoutDependencies`): the doubles above stand in.
  return Layer.mergeAll(Invoices.layerWithoutDependencies, PaymentEvidence.layerWithoutDependencies, InvoiceExpiry.layerWithoutDependencies, merchant).pipe(
    // No refunds in memory: an invalidation has nothing to reject.
    Layer.provideMerge(EvidenceFollowUp.none),
    Layer.provideMerge(OptionPlanner.layerWithoutDependencies),
    Layer.provideMerge(infrastructure),
    Layer.provideMerge(InMemoryStore.layer)
  )
}
