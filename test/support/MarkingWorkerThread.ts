/** A payment worker thread that answers every task with its own thread id (test/unit/payment-worker.test.ts). */
import { parentPort, threadId } from "node:worker_threads"

parentPort?.on("message", (message: { readonly id: number }) => parentPort!.postMessage({ id: message.id, ok: true, value: [`thread ${threadId}`] }))
