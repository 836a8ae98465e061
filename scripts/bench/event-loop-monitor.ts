/**
 * Preloaded with `--import` into a server under a paced load (scripts/bench/paced-tail.ts): prints
 * the event loop's delay (max and p99 at 1 ms resolution) every second on stderr. A preload runs in
 * every thread, worker threads too: each line names its thread. Under a create load the payment
 * worker's loop shows 50–200 ms delays while its tasks, timed in the thread, ran under 1 ms each with
 * no gap over 40 ms between them: that figure is not a stall of the work (docs/decisions.md,
 * "Create, second look").
 */
import { monitorEventLoopDelay } from "node:perf_hooks"
import { isMainThread } from "node:worker_threads"

const histogram = monitorEventLoopDelay({ resolution: 1 })
histogram.enable()
setInterval(() => {
  const ms = (nanos: number) => (nanos / 1e6).toFixed(1)
  process.stderr.write(`[event-loop] max ${ms(histogram.max)} p99 ${ms(histogram.percentile(99))} ${isMainThread ? "main" : "worker"}\n`)
  histogram.reset()
}, 1000).unref()
