import { Effect, Exit, Layer, References, Scope } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { sequenceArb } from "./arbitraries.ts"
import { runSequence, SpecBackend, type SpecServices } from "./SpecDriver.ts"
import { InMemoryStore, inMemoryServices, IN_MEMORY_MERCHANT } from "../support/InMemoryInvoiceRepo.ts"

/** Where the property runs: the services and a TestClock, built once. */
export interface SpecRunner {
  readonly run: <A, E>(effect: Effect.Effect<A, E, SpecServices>) => Promise<A>
  readonly close: () => Promise<void>
}

// The services log warnings the sequences provoke on purpose (a confirmed invoice's reorganisation).
const quiet = Layer.succeed(References.MinimumLogLevel, "None")

const START = Date.parse("2026-01-01T00:00:00.000Z")

/** Builds `layer` (services plus SpecBackend) with a TestClock set to 2026-01-01. */
export const specRunner = async (layer: Layer.Layer<SpecServices>): Promise<SpecRunner> => {
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(Layer.mergeAll(layer, TestClock.layer(), quiet), scope))
  const run = <A, E>(effect: Effect.Effect<A, E, SpecServices>) => Effect.runPromise(Effect.provide(effect, context))
  await Effect.runPromise(Effect.provide(TestClock.setTime(START), context))
  return { run, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

/** The real services over the in-memory repositories, with the ethereum and base watchers watched. */
export const specBackendLayer = Layer.effect(
  SpecBackend,
  Effect.map(Effect.service(InMemoryStore), (store) => ({
    merchantId: IN_MEMORY_MERCHANT,
    outboxOf: store.outboxOf,
    setChainTime: store.setChainTime,
    watched: ["ethereum", "base"],
    reset: store.reset
  }))
)

export const inMemorySpecLayer: Layer.Layer<SpecServices> = specBackendLayer.pipe(Layer.provideMerge(inMemoryServices({ watched: ["ethereum", "base"] })))

/** The same for a due-date merchant: 7 days, then 3 days of grace. */
export const dueDateSpecLayer: Layer.Layer<SpecServices> = specBackendLayer.pipe(
  Layer.provideMerge(inMemoryServices({ watched: ["ethereum", "base"], timing: { mode: "due_date", dueAfterDays: 7, gracePeriodDays: 3 } }))
)

export interface PropertyReport {
  readonly runs: number
  readonly commands: number
  readonly rows: ReadonlyMap<string, number>
}

/**
 * `numRuns` random command sequences (up to `maxLength` commands each) through `runner`, each
 * checked against the reference model after every command. A failure reports fast-check's seed and
 * path (replay with `{ seed, path }`) and the shrunk sequence in the spec's words.
 */
export const runSpecProperty = async (
  runner: SpecRunner,
  options: { readonly numRuns: number; readonly maxLength: number; readonly dueDate?: boolean; readonly seed?: number; readonly path?: string }
): Promise<PropertyReport> => {
  const rows = new Map<string, number>()
  let runs = 0
  let commands = 0
  await fc.assert(
    fc.asyncProperty(sequenceArb(options.maxLength, options.dueDate === true), async (sequence) => {
      const done = await runner.run(runSequence(sequence))
      runs += 1
      commands += sequence.length
      for (const row of done.model.rowsTaken) rows.set(row, (rows.get(row) ?? 0) + 1)
    }),
    { numRuns: options.numRuns, ...(options.seed === undefined ? {} : { seed: options.seed }), ...(options.path === undefined ? {} : { path: options.path }) }
  )
  return { runs, commands, rows }
}

/** Replays a failure printed by fast-check: `SPEC_SEED=<seed> SPEC_PATH=<path>`. */
export const replayOptions = (): { seed?: number; path?: string } => ({
  ...(process.env.SPEC_SEED === undefined ? {} : { seed: Number(process.env.SPEC_SEED) }),
  ...(process.env.SPEC_PATH === undefined ? {} : { path: process.env.SPEC_PATH })
})
