import { Effect, Exit, Fiber, Metric } from "effect"
import { PrometheusMetrics } from "effect/observability"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "@effect/vitest"
import { parseConfig } from "../../src/config/AppConfig.ts"
import { chainWatcherStatuses, configuredNetworks, lagSeconds, redactError } from "../../src/ops/ChainWatcherStatus.ts"
import { exitWithin } from "../../src/ops/Deadline.ts"
import { recordEvidenceApplied } from "../../src/observability/Metrics.ts"

const settings = (endpoints: Record<string, string>) => ({ ...parseConfig({}).chains, endpoints })

describe("chain watcher status", () => {
  const headTime = new Date("2026-11-20T12:00:00Z")

  it("lag is head time minus processed time, never negative, unknown until both are known", () => {
    expect(lagSeconds({ headTime, chainTime: new Date(headTime.getTime() - 12_250) })).toBe(12.25)
    expect(lagSeconds({ headTime, chainTime: new Date(headTime.getTime() + 3_000) })).toBe(0)
    expect(lagSeconds({ headTime: null, chainTime: headTime })).toBeNull()
    expect(lagSeconds({ headTime, chainTime: null })).toBeNull()
  })

  it("cuts every URL in an error to its origin", () => {
    expect(redactError("POST https://eth-mainnet.g.alchemy.com/v2/SECRET failed: 429")).toBe("POST https://eth-mainnet.g.alchemy.com failed: 429")
    expect(redactError("fetch http://user:pass@10.0.0.5:8545/?key=SECRET (ECONNREFUSED)")).toBe("fetch http://10.0.0.5:8545 (ECONNREFUSED)")
    expect(redactError("url \"wss://node.example/ws/SECRET\" and https://a.example/x")).toBe("url \"wss://node.example\" and https://a.example")
    expect(redactError("the node has no block at height 12")).toBe("the node has no block at height 12")
  })

  it("lists all five networks in a fixed order, configured when an endpoint is set", () => {
    const statuses = chainWatcherStatuses(settings({ base: "http://127.0.0.1:8545" }), [
      { network: "base", processedHeight: 10n, chainTime: headTime, headHeight: 12n, headTime, lastError: null, lastErrorAt: null, updatedAt: headTime, endpoints: null },
      { network: "dogecoin", processedHeight: 1n, chainTime: null, headHeight: null, headTime: null, lastError: null, lastErrorAt: null, updatedAt: headTime, endpoints: null }
    ])
    expect(statuses.map((status) => [status.network, status.configured])).toEqual([
      ["bitcoin", false],
      ["ethereum", false],
      ["arbitrum", false],
      ["base", true],
      ["solana", false]
    ])
    expect(statuses[3]).toMatchObject({ processedHeight: "10", headHeight: "12", lagSeconds: 0, updatedAt: headTime.toISOString() })
    expect(statuses[0]).toMatchObject({ processedHeight: null, lagSeconds: null, updatedAt: null })
    expect(configuredNetworks(settings({ solana: "http://a", bitcoin: "http://b" }))).toEqual(["bitcoin", "solana"])
  })
})

describe("exitWithin", () => {
  it.effect("answers at the limit without waiting for an effect that does not stop when interrupted", () =>
    Effect.gen(function*() {
      const stuck = Effect.uninterruptible(Effect.sleep("1 hour"))
      const fiber = yield* Effect.forkChild(exitWithin(stuck, "2 seconds"))
      yield* TestClock.adjust("1999 millis")
      const early = fiber.pollUnsafe()
      yield* TestClock.adjust("1 millis")
      expect({ early, late: yield* Fiber.join(fiber) }).toEqual({ early: undefined, late: undefined })
    }))

  it.effect("hands back the exit of an effect that ends in time", () =>
    Effect.gen(function*() {
      expect(yield* exitWithin(Effect.succeed(7), "2 seconds")).toEqual(Exit.succeed(7))
      const failed = yield* exitWithin(Effect.fail("boom"), "2 seconds")
      expect(failed !== undefined && Exit.isFailure(failed)).toBe(true)
    }))
})

describe("recordEvidenceApplied", () => {
  it.effect("counts per network and outcome in checkout_evidence_applied_total", () =>
    Effect.gen(function*() {
      yield* recordEvidenceApplied("base", "evidence")
      yield* recordEvidenceApplied("base", "evidence")
      yield* recordEvidenceApplied("ethereum", "unmatched", 3)
      const text = yield* PrometheusMetrics.format()
      expect(text).toContain("# TYPE checkout_evidence_applied_total counter")
      expect(text).toContain("checkout_evidence_applied_total{network=\"base\",outcome=\"evidence\"} 2")
      expect(text).toContain("checkout_evidence_applied_total{network=\"ethereum\",outcome=\"unmatched\"} 3")
    }).pipe(Effect.provideService(Metric.MetricRegistry, new Map())))
})
