import { Effect } from "effect"
import { getHeapSpaceStatistics } from "node:v8"
import { describe, expect, it } from "vitest"
import { releaseBootMemory } from "../../src/runtime/BootMemory.ts"

const youngGenerationBytes = () => getHeapSpaceStatistics().find((space) => space.space_name === "new_space")!.space_size

describe("releasing start-up memory", () => {
  it("shrinks the young generation that a burst of allocation grew", () => {
    // What loading modules does at start: many short-lived objects, so V8 grows its young generation.
    let sink = 0
    for (let round = 0; round < 200; round++) sink += Array.from({ length: 20_000 }, (_, i) => ({ i, text: `${round}:${i}` })).length
    expect(sink).toBe(4_000_000)
    const grown = youngGenerationBytes()
    Effect.runSync(releaseBootMemory)
    const released = youngGenerationBytes()
    expect(grown).toBeGreaterThan(4 * 1024 * 1024)
    expect(released).toBeLessThan(grown / 2)
  })
})
