import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { DEMO_KEYS } from "../../src/demo/DemoMerchant.ts"
import { type PaymentTask, runPaymentTask } from "../../src/payments/PaymentTasks.ts"
import { makePaymentWorker, WorkerLane } from "../../src/payments/PaymentWorker.ts"

const lanes: Array<WorkerLane> = []
const lane = (entry?: URL) => {
  const made = new WorkerLane(entry)
  lanes.push(made)
  return made
}
afterAll(() => Promise.all(lanes.map((made) => made.close())))

const tasks: ReadonlyArray<PaymentTask> = [
  { kind: "evmAddresses", keys: [0, 1, 2, 3, 4, 5, 6, 7].map((index) => ({ xpub: DEMO_KEYS.evmXpub, index: index * 97 })) },
  { kind: "bitcoinAddresses", xpub: DEMO_KEYS.bitcoinZpub, first: 40, count: 12 },
  { kind: "qrSvgs", texts: ["bitcoin:bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu?amount=0.0001", null, "ethereum:0xdAC17F958D2ee523a2206206994597C13D831ec7@1/transfer?address=0x9858EfFD232B4033E47d90003D41EC34EcaEda94&uint256=25500000"] }
]

describe("payment worker threads", () => {
  it("answer every task exactly as the inline computation does, under concurrency", async () => {
    const threads = [lane(), lane()]
    const worker = makePaymentWorker(threads)
    const many = Array.from({ length: 30 }, (_, round) => tasks[round % tasks.length])
    const answers = await Effect.runPromise(Effect.forEach(many, worker.run, { concurrency: "unbounded" }))
    expect(answers).toEqual(many.map(runPaymentTask))
    expect(answers[0]).toHaveLength(8)
    expect(answers[2][1]).toBeNull()
    expect(threads.map((thread) => thread.counts)).toEqual([{ answered: 15, failedOver: 0 }, { answered: 15, failedOver: 0 }])
  })

  it("computes inline when no thread is configured", async () => {
    const worker = makePaymentWorker([])
    expect(await Effect.runPromise(worker.bitcoinAddresses(DEMO_KEYS.bitcoinZpub, 0, 2))).toEqual([
      "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu",
      "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g"
    ])
  })

  it("hands the tasks of a thread that dies back to the event loop, so no request is lost", async () => {
    const dying = lane(new URL("../support/DyingWorkerThread.ts", import.meta.url))
    const worker = makePaymentWorker([dying])
    const answers = await Effect.runPromise(Effect.all(tasks.map(worker.run), { concurrency: "unbounded" }))
    expect(answers).toEqual(tasks.map(runPaymentTask))
    // The lost thread is replaced by a new one on the next task, which also dies and fails over.
    expect(await Effect.runPromise(worker.run(tasks[0]))).toEqual(runPaymentTask(tasks[0]))
    expect(dying.counts).toEqual({ answered: 0, failedOver: tasks.length + 1 })
  })

  it("reports a task that fails as a computation in the error channel", async () => {
    const worker = makePaymentWorker([lane()])
    const failed = await Effect.runPromise(Effect.flip(worker.evmAddresses([{ xpub: "not-an-extended-key", index: 0 }])))
    expect(failed._tag).toBe("PaymentTaskFailed")
  })
})
