/** Entry of a PaymentWorker thread: runs each posted task and answers with its id. */
import { parentPort } from "node:worker_threads"
import { type PaymentTask, runPaymentTask } from "./PaymentTasks.ts"

parentPort?.on("message", (message: { readonly id: number; readonly task: PaymentTask }) => {
  try {
    parentPort!.postMessage({ id: message.id, ok: true, value: runPaymentTask(message.task) })
  } catch (error) {
    parentPort!.postMessage({ id: message.id, ok: false, error: error instanceof Error ? error.message : String(error) })
  }
})
