import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 30_000,
    // Suites that provoke failures log warnings and traces on purpose: shown only for a failing test.
    silent: "passed-only",
    hookTimeout: 120_000,
    // One embedded PGlite per test file; two workers suit the 2-core machines.
    maxWorkers: 2
  }
})
