import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    // Generous: a suite's first test carries the warm-up (worker threads, WASM, the first queries), which
    // took 22 s on a loaded two-core machine; a hung test still fails, just later.
    testTimeout: 120_000,
    // Suites that provoke failures log warnings and traces on purpose: shown only for a failing test.
    silent: "passed-only",
    hookTimeout: 240_000,
    // One embedded PGlite per test file; two workers suit the 2-core machines.
    maxWorkers: 2
  }
})
