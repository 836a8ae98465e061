import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { WatcherLeadership } from "../../src/chains/watcher/WatcherLeadership.ts"
import { suiteOptions } from "../support/TestApp.ts"
import { testDatabase } from "../support/TestLayers.ts"

const onPostgres = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== ""
if (!onPostgres) console.log("skipped: chain watcher leadership across instances (DATABASE_URL is not set; PGlite has one process)")

/** A leadership service as another process would build it: its own reserved connection. */
const instance = Effect.gen(function*() {
  const scope = yield* Scope.make()
  const context = yield* Layer.buildWithScope(Layer.fresh(WatcherLeadership.layer), scope)
  const leadership = Context.get(context, WatcherLeadership)
  return { lead: leadership.lead, stop: Scope.close(scope, Exit.void) }
})

it.layer(testDatabase(), suiteOptions)((it) => {
  describe.skipIf(!onPostgres)("chain watcher leadership", () => {
    it.effect("gives each network to one instance at a time, and to another when the leader stops", () =>
      Effect.gen(function*() {
        const network = `test-${crypto.randomUUID()}`
        const first = yield* instance
        const second = yield* instance
        yield* Effect.gen(function*() {
          expect(yield* first.lead(network)).toBe(true)
          expect(yield* second.lead(network)).toBe(false)
          expect(yield* first.lead(network)).toBe(true)
          // Another network is free for the second instance.
          expect(yield* second.lead(`${network}-other`)).toBe(true)
          yield* first.stop
          expect(yield* second.lead(network)).toBe(true)
        }).pipe(Effect.ensuring(Effect.andThen(first.stop, second.stop)))
      }))
  })

  describe.skipIf(onPostgres)("chain watcher leadership on the embedded database", () => {
    it.effect("always leads: one process", () =>
      Effect.gen(function*() {
        const only = yield* instance
        expect(yield* only.lead("ethereum")).toBe(true)
        yield* only.stop
      }))
  })
})
