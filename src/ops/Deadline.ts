import { type Duration, Effect, type Exit, Fiber, Option } from "effect"

/**
 * `effect`'s exit when it ends within `limit`, else `undefined`, without waiting for it to stop.
 * `Effect.timeout` alone would not bound the answer: an interrupted query on PGlite (which ignores
 * cancel requests) or on a hung connection ends only when the query does. Past the limit the
 * effect is interrupted in the background.
 */
export const exitWithin = <A, E, R>(effect: Effect.Effect<A, E, R>, limit: Duration.Input): Effect.Effect<Exit.Exit<A, E> | undefined, never, R> =>
  Effect.gen(function*() {
    const fiber = yield* Effect.forkDetach(effect)
    const exit = yield* Effect.timeoutOption(Fiber.await(fiber), limit)
    if (Option.isSome(exit)) return exit.value
    yield* Effect.forkDetach(Fiber.interrupt(fiber))
    return undefined
  })
