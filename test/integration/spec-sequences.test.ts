import { Context, Effect, Exit, Layer, References, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
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

describe("the spec's table on the SQL repositories", () => {
  const scope = Effect.runSync(Scope.make())
  let context: Context.Context<Layer.Success<typeof SqlApp> | TestClock.TestClock>
  let immediate: SpecRunner
  let dueDate: SpecRunner

  beforeAll(async () => {
    context = await Effect.runPromise(Layer.buildWithScope(Layer.mergeAll(SqlApp, TestClock.layer(), Layer.succeed(References.MinimumLogLevel, "None")), scope))
    const runnerOf = async (timing: "immediate" | "due_date"): Promise<SpecRunner> => {
      const backend = await Effect.runPromise(Effect.provide(backendFor(timing), context))
      return {
        run: <A, E>(effect: Effect.Effect<A, E, SpecServices>) =>
          Effect.runPromise(Effect.provide(Effect.provideService(effect, SpecBackend, backend) as Effect.Effect<A, E, Services>, context)),
        close: async () => {}
      }
    }
    await Effect.runPromise(Effect.provide(TestClock.setTime(START), context))
    immediate = await runnerOf("immediate")
    dueDate = await runnerOf("due_date")
  }, 120_000)
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

  // The watcher rows need a watched network, which these services (no RPC URLs) have not: they run in memory only.
  const sqlCases = TABLE_CASES.filter((tableCase) => ![...tableCase.given, ...(tableCase.when === undefined ? [] : [tableCase.when])].some((command) => command.kind === "watcher"))

  for (const tableCase of sqlCases) {
    const title = `${tableCase.row}: ${tableCase.title}`
    const test = () => (tableCase.dueDate === true ? dueDate : immediate).run(runCase(tableCase))
    if (isKnownDeparture(tableCase.row, tableCase.title)) it.fails(title, test)
    else it(title, test)
  }

  it(`${SEQUENCES} random command sequences agree with the reference model after every command`, async () => {
    const report = await runSpecProperty(immediate, { numRuns: SEQUENCES, maxLength: 10, ...replayOptions() })
    expect(report.runs).toBe(SEQUENCES)
  }, 300_000)
})
