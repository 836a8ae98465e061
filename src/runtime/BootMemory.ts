import { Effect } from "effect"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

type Gc = (options: { readonly type: "major"; readonly execution: "sync"; readonly flavor: "last-resort" }) => void

/**
 * V8's `gc` function, exposed for this process only when asked for (the flag makes a fresh
 * context carry it; Node documents this pattern under `v8.setFlagsFromString`).
 */
const exposedGc = (): Gc => {
  setFlagsFromString("--expose-gc")
  return runInNewContext("gc") as Gc
}

/**
 * Hands back to the OS what start-up alone needed. Loading and compiling the modules, type
 * stripping and the migrations leave about 70 MB of dead objects and grow V8's young generation to
 * its maximum; ordinary full collections keep those pages. A memory-reducing collection ("last
 * resort": the one V8 runs before giving up on an allocation) also shrinks the young generation,
 * which grows back on demand under load. It runs once, after the server listens: a few tens of
 * milliseconds on an idle process (docs/decisions.md, Footprint).
 */
export const releaseBootMemory: Effect.Effect<void> = Effect.sync(() => exposedGc()({ type: "major", execution: "sync", flavor: "last-resort" }))
