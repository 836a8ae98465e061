import { describe, expect, it } from "vitest"
import { LEASE_MS } from "../../src/webhooks/DeliveryClaims.ts"
import { afterAttempt } from "../../src/webhooks/DeliveryRecording.ts"
import { WEBHOOK_TIMEOUT_MS } from "../../src/webhooks/WebhookConnector.ts"

const NOW = Date.parse("2026-01-01T00:00:00Z")

describe("the retry schedule", () => {
  it("retries after 1, 5 and 15 minutes, then fails for good", () => {
    expect([1, 2, 3].map((attempt) => afterAttempt(attempt, false, NOW))).toEqual([
      { status: "pending", nextAttemptAt: new Date(NOW + 60_000) },
      { status: "pending", nextAttemptAt: new Date(NOW + 5 * 60_000) },
      { status: "pending", nextAttemptAt: new Date(NOW + 15 * 60_000) }
    ])
    expect(afterAttempt(4, false, NOW)).toEqual({ status: "failed", nextAttemptAt: null })
  })

  it("stops at the first success", () => {
    for (const attempt of [1, 2, 3, 4]) expect(afterAttempt(attempt, true, NOW)).toEqual({ status: "delivered", nextAttemptAt: null })
  })

  it("leases a claim for longer than an attempt may take", () => {
    expect(WEBHOOK_TIMEOUT_MS).toBe(10_000)
    expect(LEASE_MS).toBeGreaterThan(WEBHOOK_TIMEOUT_MS)
  })
})
