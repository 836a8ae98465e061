import { Context, Data, Effect, Layer } from "effect"
import { Worker } from "node:worker_threads"
import { AppConfig } from "../config/AppConfig.ts"
import type { OptionRequest } from "./OptionBuilder.ts"
import type { RailSettingsShape } from "./PaymentMethod.ts"
import type { OptionOutcome, PaymentTask, PaymentTaskResult } from "./PaymentTasks.ts"

/** A payment task that failed as a computation (not because its thread was lost). */
export class PaymentTaskFailed extends Data.TaggedError("PaymentTaskFailed")<{ readonly message: string }> {}

type Run = (task: PaymentTask) => Effect.Effect<PaymentTaskResult, PaymentTaskFailed>
type Reply = { readonly id: number; readonly ok: true; readonly value: PaymentTaskResult } | { readonly id: number; readonly ok: false; readonly error: string }

/**
 * Runs a task on the event loop (no thread configured, or a lost thread's waiting tasks). The
 * tasks' module, with libsecp256k1's WebAssembly, is loaded on first use: a process whose thread
 * does the work never holds it on its main thread.
 */
const inline: Run = (task) =>
  Effect.promise(() => import("./PaymentTasks.ts")).pipe(
    Effect.flatMap(({ runPaymentTask }) => Effect.try({ try: () => runPaymentTask(task), catch: (error) => new PaymentTaskFailed({ message: String(error) }) }))
  )

/** A `worker_threads` thread for payment tasks, started on first use and on the next use after it dies. */
export interface PaymentThread {
  readonly run: Run
  readonly close: () => Promise<unknown>
}

/** A thread that dies hands its waiting tasks back to the event loop, which computes them inline. */
export const paymentThread = (entry = new URL("./PaymentWorkerThread.ts", import.meta.url)): PaymentThread => {
  let worker: Worker | undefined
  let nextId = 0
  const waiting = new Map<number, { readonly task: PaymentTask; readonly resume: (answer: ReturnType<Run>) => void }>()
  const failOver = () => {
    for (const { resume, task } of waiting.values()) resume(inline(task))
    waiting.clear()
  }
  const spawn = () => {
    const started = new Worker(entry)
    // An idle thread must not keep the process alive; the layer's finalizer terminates it.
    started.unref()
    started.on("message", (reply: Reply) => {
      const task = waiting.get(reply.id)
      waiting.delete(reply.id)
      task?.resume(reply.ok ? Effect.succeed(reply.value) : Effect.fail(new PaymentTaskFailed({ message: reply.error })))
    })
    const lost = () => {
      if (worker !== started) return
      worker = undefined
      failOver()
    }
    started.on("error", lost)
    started.on("exit", lost)
    return started
  }
  return {
    run: (task) =>
      Effect.callback((resume) => {
        worker ??= spawn()
        const id = nextId++
        waiting.set(id, { task, resume })
        worker.postMessage({ id, task })
        return Effect.sync(() => waiting.delete(id))
      }),
    close: () => {
      const stopping = worker
      worker = undefined
      failOver()
      return stopping?.terminate() ?? Promise.resolve()
    }
  }
}

type PaymentWorkerShape = {
  readonly run: Run
  readonly bitcoinAddresses: (xpub: string, first: number, count: number) => Effect.Effect<ReadonlyArray<string>, PaymentTaskFailed>
  /** Builds an invoice's options (addresses, URIs, QR codes, payloads) in one task. */
  readonly options: (rails: RailSettingsShape, requests: ReadonlyArray<OptionRequest>) => Effect.Effect<ReadonlyArray<OptionOutcome>, PaymentTaskFailed>
}

/** Hands tasks to the threads in turn; with none they run inline. */
export const makePaymentWorker = (threads: ReadonlyArray<PaymentThread>): PaymentWorkerShape => {
  let turn = 0
  const run: Run = (task) => threads.length === 0 ? inline(task) : threads[turn++ % threads.length].run(task)
  return {
    run: (task) => run(task).pipe(Effect.withSpan("PaymentWorker.run", { attributes: { kind: task.kind } })),
    bitcoinAddresses: (xpub, first, count) =>
      (count <= 0 ? Effect.succeed([]) : run({ kind: "bitcoinAddresses", xpub, first, count }).pipe(Effect.map((result) => result as ReadonlyArray<string>)))
        .pipe(Effect.withSpan("PaymentWorker.bitcoinAddresses")),
    options: (rails, requests) => run({ kind: "options", rails, requests }).pipe(Effect.map((result) => result as ReadonlyArray<OptionOutcome>))
  }
}

/**
 * Runs the CPU-heavy steps of payment options (child key derivation, QR codes) on worker threads,
 * so that a burst of invoice creations does not hold the event loop that serves every other
 * request; a create hands over all its options in one task. With
 * `CHECKOUT_PAYMENT_WORKER_THREADS=0` they run inline.
 */
export class PaymentWorker extends Context.Service<PaymentWorker, PaymentWorkerShape>()("Payments/PaymentWorker") {
  static readonly layer = Layer.effect(
    PaymentWorker,
    Effect.gen(function*() {
      const { paymentWorkerThreads } = yield* AppConfig
      const threads = Array.from({ length: paymentWorkerThreads }, () => paymentThread())
      yield* Effect.addFinalizer(() => Effect.promise(() => Promise.all(threads.map((thread) => thread.close()))))
      return makePaymentWorker(threads)
    })
  )
}
