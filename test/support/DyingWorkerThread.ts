/** A payment worker thread that dies on its first task (test/unit/payment-worker.test.ts). */
import { parentPort } from "node:worker_threads"

parentPort?.on("message", () => process.exit(3))
