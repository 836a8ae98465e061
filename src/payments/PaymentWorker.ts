import { Context, Data, Effect, Layer } from "effect"
import { Worker } from "node:worker_threads"
import { AppConfig } from "../config/AppConfig.ts"
import type { OptionRequest } from "./OptionBuilder.ts"
import type { RailSettings } from "./PaymentMethod.ts"
import type { OptionOutcome, PaymentTask, PaymentTaskResult } from "./PaymentTasks.ts"

/** A payment task that failed as a computation (not because its thread was lost). */
export class PaymentTaskFailed extends Data.TaggedError("PaymentTaskFailed")<{ readonly message: string }> {}

interface Pending {
  readonly task: PaymentTask
  readonly resume: (effect: Effect.Effect<PaymentTaskResult, PaymentTaskFailed>) => void
}

type Reply =
  | { readonly id: number; readonly ok: true; readonly value: PaymentTaskResult }
  | { readonly id: number; readonly ok: false; readonly error: string }

/**
 * Runs a task on the event loop (no threads configured, or a lost thread's waiting tasks). The
 * tasks' module, with libsecp256k1's WebAssembly, is loaded on first use: a process whose thread
 * does the work never holds it on its main thread.
 */
const inline = (task: PaymentTask) =>
  Effect.promise(() => import("./PaymentTasks.ts")).pipe(
    Effect.flatMap(({ runPaymentTask }) => Effect.try({ try: () => runPaymentTask(task), catch: (error) => new PaymentTaskFailed({ message: String(error) }) }))
  )

const THREAD_ENTRY = new URL("./PaymentWorkerThread.ts", import.meta.url)

/**
 * One worker thread and the requests waiting on it. A thread that dies hands its waiting requests
 * back to the event loop, which computes them inline, and is replaced on the next request.
 */
export class WorkerLane {
  private readonly entry: URL
  constructor(entry: URL = THREAD_ENTRY) {
    this.entry = entry
  }

  private worker: Worker | undefined
  private readonly pending = new Map<number, Pending>()
  private nextId = 0
  /** Tasks answered by the thread, and tasks handed back to the event loop by a lost thread. */
  readonly counts = { answered: 0, failedOver: 0 }

  run(task: PaymentTask, resume: Pending["resume"]): () => void {
    const worker = this.worker ?? this.spawn()
    const id = this.nextId++
    this.pending.set(id, { task, resume })
    worker.postMessage({ id, task })
    return () => this.pending.delete(id)
  }

  close(): Promise<unknown> {
    const worker = this.worker
    this.worker = undefined
    this.failOver()
    return worker === undefined ? Promise.resolve() : worker.terminate()
  }

  private spawn(): Worker {
    const worker = new Worker(this.entry)
    // Idle threads must not keep the process alive; the layer's finalizer terminates them.
    worker.unref()
    worker.on("message", (reply: Reply) => {
      const waiting = this.pending.get(reply.id)
      if (waiting === undefined) return
      this.pending.delete(reply.id)
      this.counts.answered++
      waiting.resume(reply.ok ? Effect.succeed(reply.value) : Effect.fail(new PaymentTaskFailed({ message: reply.error })))
    })
    const lost = () => {
      if (this.worker !== worker) return
      this.worker = undefined
      this.failOver()
    }
    worker.on("error", lost)
    worker.on("exit", lost)
    this.worker = worker
    return worker
  }

  private failOver() {
    const waiting = [...this.pending.values()]
    this.pending.clear()
    this.counts.failedOver += waiting.length
    for (const { resume, task } of waiting) resume(inline(task))
  }
}

type PaymentWorkerShape = {
  readonly run: (task: PaymentTask) => Effect.Effect<PaymentTaskResult, PaymentTaskFailed>
  readonly bitcoinAddresses: (xpub: string, first: number, count: number) => Effect.Effect<ReadonlyArray<string>, PaymentTaskFailed>
  /** Builds an invoice's options (addresses, URIs, QR codes, payloads) in one task. */
  readonly options: (rails: RailSettings, requests: ReadonlyArray<OptionRequest>) => Effect.Effect<ReadonlyArray<OptionOutcome>, PaymentTaskFailed>
}

/** Hands tasks to the lanes in turn; with no lanes they run inline. */
export const makePaymentWorker = (lanes: ReadonlyArray<WorkerLane>): PaymentWorkerShape => {
  let turn = 0
  const run = (task: PaymentTask): Effect.Effect<PaymentTaskResult, PaymentTaskFailed> => {
    if (lanes.length === 0) return inline(task)
    const lane = lanes[turn++ % lanes.length]
    return Effect.callback<PaymentTaskResult, PaymentTaskFailed>((resume) => {
      const cancel = lane.run(task, resume)
      return Effect.sync(cancel)
    })
  }
  const strings = (result: PaymentTaskResult) => result as ReadonlyArray<string>
  const outcomes = (result: PaymentTaskResult) => result as ReadonlyArray<OptionOutcome>
  return {
    run: (task) => run(task).pipe(Effect.withSpan("PaymentWorker.run", { attributes: { kind: task.kind } })),
    bitcoinAddresses: (xpub, first, count) =>
      (count <= 0 ? Effect.succeed([]) : run({ kind: "bitcoinAddresses", xpub, first, count }).pipe(Effect.map(strings))).pipe(
        Effect.withSpan("PaymentWorker.bitcoinAddresses")
      ),
    options: (rails, requests) => run({ kind: "options", rails, requests }).pipe(Effect.map(outcomes))
  }
}

/**
 * Runs the CPU-heavy steps of payment options (child key derivation, QR codes: about 0.15 ms and
 * 0.05 ms each) on worker threads, so that a burst of invoice creations does not hold the event
 * loop that serves every other request: a create hands over all its options in one task, since
 * every hop to a thread can wait for a core. With `CHECKOUT_PAYMENT_WORKER_THREADS=0` they run inline.
 */
export class PaymentWorker extends Context.Service<PaymentWorker, PaymentWorkerShape>()("Payments/PaymentWorker") {
  static readonly layer = Layer.effect(
    PaymentWorker,
    Effect.gen(function*() {
      const { paymentWorkerThreads } = yield* AppConfig
      const lanes = Array.from({ length: paymentWorkerThreads }, () => new WorkerLane())
      yield* Effect.addFinalizer(() => Effect.promise(() => Promise.all(lanes.map((lane) => lane.close()))))
      return makePaymentWorker(lanes)
    })
  )
}
