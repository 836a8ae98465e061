import { Context, Effect, Layer, References } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { expect, it } from "@effect/vitest"
import { IN_MEMORY_METHODS } from "../support/InMemoryInvoiceRepo.ts"
import { inPrivateDatabase, newMerchant, testServices } from "../support/TestLayers.ts"
import { SpecBackend, type SpecServices } from "../spec/SpecDriver.ts"
import { replayOptions, runSpecProperty, type SpecRunner } from "../spec/SpecProperty.ts"
import { runCase, TABLE_CASES } from "../spec/TableCases.ts"
import { isKnownDeparture } from "../spec/departures.ts"

/**
 * The spec's table (test/spec) on the SQL repositories: every table case, and 300 random command
 * sequences (SPEC_SQL_SEQUENCES), through the real services on PGlite, or on the PostgreSQL server
 * of DATABASE_URL (CI's `npm run test:integration`), so that the guarded statements (optimistic
 * saveIfUnchanged, FOR UPDATE, ON CONFLICT, SKIP LOCKED) are exercised by the same sequences the
 * in-memory suite runs 10,000 of. Under a TestClock: no real waiting.
 */

const SEQUENCES = Number(process.env.SPEC_SQL_SEQUENCES ?? 300)

const START = Date.parse("2026-01-01T00:00:00.000Z")

// The domain services (no HTTP server). The sweeper expires every due invoice of its database, on a
// clock of its own: a database of its own.
const SqlApp = inPrivateDatabase((url) => testServices({}, url === undefined ? {} : { DATABASE_URL: url }))

type Services = Exclude<SpecServices, SpecBackend>

/** A merchant of the SQL services as the driver's backend: its outbox read back in order; no watched networks (no RPC URLs). */
const backendFor = (timing: "immediate" | "due_date") =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const merchant = yield* newMerchant({
      methods: IN_MEMORY_METHODS,
      timing: timing === "immediate" ? { mode: "immediate", expiresAfterMinutes: 60 } : { mode: "due_date", dueAfterDays: 7, gracePeriodDays: 3 }
    })
    return SpecBackend.of({
      merchantId: merchant.merchantId,
      outboxOf: (invoiceId) =>
        sql<{ readonly event: string }>`SELECT event FROM outbox WHERE invoice_id = ${invoiceId} ORDER BY id`.pipe(
          Effect.map((rows) => rows.map((row) => row.event)),
          Effect.orDie
        ),
      setChainTime: () => Effect.void,
      watched: [],
      reset: Effect.void
    })
  })

/** The two merchants the cases run as (immediate and due-date timing), made once the clock is at START. */
class Backends extends Context.Service<Backends, { readonly immediate: SpecBackend["Service"]; readonly dueDate: SpecBackend["Service"] }>()("test/SpecBackends") {}

const Suite = Layer.effect(Backends, Effect.andThen(TestClock.setTime(START), Effect.all({ immediate: backendFor("immediate"), dueDate: backendFor("due_date") }))).pipe(
  Layer.provideMerge(Layer.mergeAll(SqlApp, TestClock.layer(), Layer.succeed(References.MinimumLogLevel, "None")))
)

/** `effect` as one of the backends' merchants. */
const asMerchant = <A, E>(effect: Effect.Effect<A, E, SpecServices>, dueDate: boolean) =>
  Effect.flatMap(Backends, (backends) => Effect.provideService(effect, SpecBackend, dueDate ? backends.dueDate : backends.immediate) as Effect.Effect<A, E, Services>)

it.layer(Suite, { timeout: "120 seconds", excludeTestServices: true })("the spec's table on the SQL repositories", (it) => {
  // The watcher rows need a watched network, which these services (no RPC URLs) have not: they run in memory only.
  const sqlCases = TABLE_CASES.filter((tableCase) => ![...tableCase.given, ...(tableCase.when === undefined ? [] : [tableCase.when])].some((command) => command.kind === "watcher"))

  for (const tableCase of sqlCases) {
    const title = `${tableCase.row}: ${tableCase.title}`
    const test = () => asMerchant(runCase(tableCase), tableCase.dueDate === true)
    if (isKnownDeparture(tableCase.row, tableCase.title)) it.effect.fails(title, test)
    else it.effect(title, test)
  }

  it.effect(`${SEQUENCES} random command sequences agree with the reference model after every command`, () =>
    Effect.gen(function*() {
      // fast-check drives the sequences with promises: each command runs in this suite's services.
      const services = yield* Effect.context<Services | Backends>()
      const runner: SpecRunner = {
        run: (effect) => Effect.runPromise(Effect.provide(asMerchant(effect, false), services)),
        close: async () => {}
      }
      const report = yield* Effect.promise(() => runSpecProperty(runner, { numRuns: SEQUENCES, maxLength: 10, ...replayOptions() }))
      expect(report.runs).toBe(SEQUENCES)
    }), 300_000)
})
