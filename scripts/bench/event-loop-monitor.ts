/**
 * Preloaded with `--import` into a server under a paced load (scripts/bench/paced-tail.ts): prints
 * the event loop's delay (max and p99 at 1 ms resolution) every second on stderr.
 */
import { monitorEventLoopDelay } from "node:perf_hooks"

const histogram = monitorEventLoopDelay({ resolution: 1 })
histogram.enable()
setInterval(() => {
  const ms = (nanos: number) => (nanos / 1e6).toFixed(1)
  process.stderr.write(`[event-loop] max ${ms(histogram.max)} p99 ${ms(histogram.percentile(99))}\n`)
  histogram.reset()
}, 1000).unref()
