import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { dueDateSpecLayer, inMemorySpecLayer, replayOptions, runSpecProperty, type SpecRunner, specRunner } from "./SpecProperty.ts"
import { TRANSITIONS } from "./transitions.ts"

/**
 * 10,000 random command sequences per run (SPEC_SEQUENCES to change it) through the real services
 * (Invoices, PaymentEvidence, InvoiceExpiry) on the in-memory repositories, under a TestClock,
 * each checked after every command against the reference model built from the spec's table:
 * status, exception fields, amounts, coverage, confirmations, lastTransactionHash, payments and
 * the webhook outbox, events in order. A failure prints fast-check's seed and path (replay with
 * SPEC_SEED and SPEC_PATH) and the shrunk sequence in the spec's words.
 * `node --experimental-strip-types scripts/bench/lifecycle-sequences.ts` measures it.
 */

const SEQUENCES = Number(process.env.SPEC_SEQUENCES ?? 10_000)
const MAX_LENGTH = 14

/** Rows that only the due-date sequences reach. */
const DUE_DATE_ONLY = new Set(["T2-due-date-grace"])

describe("the lifecycle against the spec's table, on the in-memory repositories", () => {
  let runner: SpecRunner
  beforeAll(async () => {
    runner = await specRunner(inMemorySpecLayer)
  })
  afterAll(() => runner.close())

  it(`${SEQUENCES} random command sequences agree with the reference model after every command`, async () => {
    const report = await runSpecProperty(runner, { numRuns: SEQUENCES, maxLength: MAX_LENGTH, ...replayOptions() })
    expect(report.runs).toBe(SEQUENCES)
    const unreached = TRANSITIONS.filter((row) => !DUE_DATE_ONLY.has(row.id) && !report.rows.has(row.id)).map((row) => row.id)
    if (SEQUENCES >= 10_000) expect(unreached).toEqual([])
  }, 180_000)
})

describe("the lifecycle against the spec's table, due-date timing (7 days, 3 of grace), on the in-memory repositories", () => {
  let runner: SpecRunner
  beforeAll(async () => {
    runner = await specRunner(dueDateSpecLayer)
  })
  afterAll(() => runner.close())

  it(`${Math.ceil(SEQUENCES / 5)} random command sequences with days passing agree with the reference model, T2 among the rows`, async () => {
    const report = await runSpecProperty(runner, { numRuns: Math.ceil(SEQUENCES / 5), maxLength: MAX_LENGTH, dueDate: true, ...replayOptions() })
    if (SEQUENCES >= 10_000) expect(report.rows.has("T2-due-date-grace")).toBe(true)
    expect(report.runs).toBe(Math.ceil(SEQUENCES / 5))
  }, 180_000)
})
