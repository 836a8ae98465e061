import { Effect } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ChainRepo } from "../../src/chains/ChainRepo.ts"
import { startTestApp, type TestApp } from "../support/TestApp.ts"

// The rewind walks the remembered blocks below a mismatch, highest first, and stops at the first
// one the chain still has: that is the fork only if the repository returns them in numeric order.

let app: TestApp

beforeAll(async () => {
  app = await startTestApp()
})
afterAll(async () => {
  await app?.close()
})

const withRepo = <A>(use: (repo: ChainRepo["Service"]) => Effect.Effect<A>) => app.run(Effect.provide(Effect.flatMap(ChainRepo, use), ChainRepo.layer))

/** Heights that cross powers of ten, where text order and numeric order differ. */
const span = fc.constantFrom([1, 200], [95, 105], [990, 1010], [1, 12], [9_990, 10_020])

const scenario = span.chain(([low, high]) =>
  fc.record({
    remembered: fc.uniqueArray(fc.integer({ min: low, max: high }), { minLength: 1, maxLength: high - low + 1 }),
    // The chain keeps the remembered hashes up to `fork` and has other blocks above it.
    fork: fc.integer({ min: low - 1, max: high }),
    mismatch: fc.integer({ min: low, max: high + 1 })
  })
)

const hashOf = (height: number, branch: string) => `0x${branch}${height.toString(16).padStart(8, "0")}`

describe("ChainRepo.blocksBelow", () => {
  it("returns the remembered blocks below a height, highest first, so the rewind stops at the highest common block", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ fork, mismatch, remembered }) => {
        const network = `rewind-${crypto.randomUUID()}`
        const below = await withRepo((repo) =>
          Effect.gen(function*() {
            yield* repo.rememberBlocks(network, remembered.map((height) => ({ height: BigInt(height), hash: hashOf(height, "aa") })))
            return yield* repo.blocksBelow(network, BigInt(mismatch))
          })
        )
        const expected = remembered.filter((height) => height < mismatch).sort((a, b) => b - a)
        expect(below.map((block) => Number(block.height))).toEqual(expected)

        // The rewind's walk against a chain that forked above `fork`.
        const onChain = (height: number) => hashOf(height, height <= fork ? "aa" : "bb")
        const found = below.find((block) => onChain(Number(block.height)) === block.hash)
        const highestCommon = expected.find((height) => height <= fork)
        expect(found === undefined ? undefined : Number(found.height)).toBe(highestCommon)
      }),
      { numRuns: 60 }
    )
  })
})
