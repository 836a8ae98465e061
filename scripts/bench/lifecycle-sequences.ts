import { performance } from "node:perf_hooks"
import { inMemorySpecLayer, runSpecProperty, specRunner } from "../../test/spec/SpecProperty.ts"

/**
 * How long the lifecycle's random command sequences take on the in-memory repositories (the
 * volume `npm test` runs in test/spec/lifecycle-sequences.test.ts). One line per run:
 *   node --experimental-strip-types scripts/bench/lifecycle-sequences.ts [sequences] [maxLength]
 */
const sequences = Number(process.argv[2] ?? 10_000)
const maxLength = Number(process.argv[3] ?? 12)

const runner = await specRunner(inMemorySpecLayer)
try {
  const started = performance.now()
  const cpuStarted = process.cpuUsage()
  const report = await runSpecProperty(runner, { numRuns: sequences, maxLength })
  const seconds = (performance.now() - started) / 1000
  const cpu = process.cpuUsage(cpuStarted)
  console.log(
    `lifecycle-sequences: ${report.runs} sequences, ${report.commands} commands (max ${maxLength} each) on the in-memory repositories in ${seconds.toFixed(1)} s wall, ${
      ((cpu.user + cpu.system) / 1e6).toFixed(1)
    } s CPU (${(report.runs / seconds).toFixed(0)} sequences/s, ${(report.commands / seconds).toFixed(0)} commands/s); rows taken: ${report.rows.size}`
  )
} finally {
  await runner.close()
}
