import { defineConfig } from "vitest/config"

/**
 * The suites `npm run test:mutation` (Stryker) runs against each mutant of the lifecycle rules:
 * pure or in memory only (no PGlite, no chains), with a fixed fast-check seed so that a mutant is
 * killed or not the same way on every run, and fewer random sequences than `npm test` runs.
 */
export default defineConfig({
  test: {
    include: [
      "test/spec/transitions.test.ts",
      "test/spec/lifecycle-sequences.test.ts",
      "test/property/lifecycle.property.test.ts",
      "test/property/refunds.test.ts",
      "test/unit/money.test.ts",
      "test/unit/lifecycle-statuses.test.ts",
      "test/unit/lifecycle-rules.test.ts",
      "test/unit/refundable.test.ts",
      "test/unit/settlement-edges.test.ts",
      "test/unit/lifecycle-decisions.test.ts",
      "test/unit/statecharts.test.ts"
    ],
    setupFiles: ["test/mutation/setup.ts"],
    env: { SPEC_SEQUENCES: process.env.SPEC_SEQUENCES ?? "150", PROPERTY_RUNS: process.env.PROPERTY_RUNS ?? "150" },
    testTimeout: 120_000,
    silent: true,
    maxWorkers: 1
  }
})
