import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Effect, Layer, Schema } from "effect"
import { ChainRepo } from "../../src/chains/watcher/ChainRepo.ts"
import { suiteOptions } from "../support/TestApp.ts"
import { testDatabase } from "../support/TestLayers.ts"

// The rewind walks the remembered blocks below a mismatch, highest first, and stops at the first
// one the chain still has: that is the fork only if the repository returns them in numeric order.

/** Heights that cross powers of ten, where text order and numeric order differ. */
const SPANS = [[1, 200], [95, 105], [990, 1010], [1, 12], [9_990, 10_020]] as const

const between = (minimum: number, maximum: number) => Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

const scenario = Arbitrary.flatMap(between(0, SPANS.length - 1), (span) => {
  const [low, high] = SPANS[span]
  return Arbitrary.all({
    remembered: Arbitrary.map(Arbitrary.array(between(low, high), { minLength: 1, maxLength: high - low + 1 }), (heights) => [...new Set(heights)]),
    // The chain keeps the remembered hashes up to `fork` and has other blocks above it.
    fork: between(low - 1, high),
    mismatch: between(low, high + 1)
  })
})

const hashOf = (height: number, branch: string) => `0x${branch}${height.toString(16).padStart(8, "0")}`

it.layer(ChainRepo.layer.pipe(Layer.provideMerge(testDatabase())), suiteOptions)((it) => {
  describe("ChainRepo.blocksBelow", () => {
    it.effect.prop(
      "returns the remembered blocks below a height, highest first, so the rewind stops at the highest common block",
      [scenario],
      ([{ fork, mismatch, remembered }]) =>
        Effect.gen(function*() {
          const repo = yield* ChainRepo
          const network = { network: `rewind-${crypto.randomUUID()}`, livemode: true }
          yield* repo.rememberBlocks(network, remembered.map((height) => ({ height: BigInt(height), hash: hashOf(height, "aa") })))
          const below = yield* repo.blocksBelow(network, BigInt(mismatch))
          const expected = remembered.filter((height) => height < mismatch).sort((a, b) => b - a)
          expect(below.map((block) => Number(block.height))).toEqual(expected)

          // The rewind's walk against a chain that forked above `fork`.
          const onChain = (height: number) => hashOf(height, height <= fork ? "aa" : "bb")
          const found = below.find((block) => onChain(Number(block.height)) === block.hash)
          const highestCommon = expected.find((height) => height <= fork)
          expect(found === undefined ? undefined : Number(found.height)).toBe(highestCommon)
        }),
      { timeout: 120_000, arbitrary: { runs: 60 } }
    )
  })
})
