import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { DEMO_KEYS, DEMO_METHODS } from "../../src/demo/DemoMerchant.ts"
import type { OptionRequest } from "../../src/payments/OptionBuilder.ts"
import { type OptionOutcome, type PaymentTask, runPaymentTask } from "../../src/payments/PaymentTasks.ts"
import { makePaymentWorker, type PaymentThread, paymentThread } from "../../src/payments/PaymentWorker.ts"
import { parseConfig } from "../../src/config/AppConfig.ts"
import { railSettingsOf } from "../../src/payments/RailSettings.ts"
import { decodeQrSvg } from "../support/QrRaster.ts"
import { InvoiceId, PaymentOptionId } from "../../src/domain/Ids.ts"
import { Micros } from "../../src/domain/Money.ts"

const threads: Array<PaymentThread> = []
const lane = (entry?: URL) => {
  const made = paymentThread(entry)
  threads.push(made)
  return made
}
afterAll(() => Promise.all(threads.map((made) => made.close())))

const rails = railSettingsOf(parseConfig({}).rails, "checkout", false)

/** The demo's options (the Solana one left out: its reference is random, so no two runs agree). */
const optionRequests = (evmXpub: string = DEMO_KEYS.evmXpub): ReadonlyArray<OptionRequest> =>
  DEMO_METHODS.filter((method) => method.network !== "solana").map((method, position) => ({
    invoiceId: InvoiceId.make("0f2f6c4e-8e0f-4bd3-9f56-1c8a1c3e5d11"),
    amountMicros: Micros.make(25_500_000n),
    label: "Demo Store",
    method: { ...method, id: `method-${position}`, xpub: method.network === "bitcoin" ? method.xpub : method.xpub === null ? null : evmXpub },
    optionId: PaymentOptionId.make(`00000000-0000-4000-8000-00000000000${position}`),
    isDefault: position === 0,
    position,
    rateMicros: method.assetCode === "BTC" ? 65_000_000_000n : 1_000_000n,
    derivationIndex: method.network === "bitcoin" ? 3 : method.xpub === null ? undefined : 194,
    knownAddress: method.network === "bitcoin" ? "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu" : undefined
  }))

const tasks: ReadonlyArray<PaymentTask> = [
  { kind: "options", rails, requests: optionRequests() },
  { kind: "bitcoinAddresses", xpub: DEMO_KEYS.bitcoinZpub, first: 40, count: 12 }
]

describe("payment worker threads", () => {
  it("answer every task exactly as the inline computation does, under concurrency", async () => {
    const worker = makePaymentWorker([lane(), lane()])
    const many = Array.from({ length: 30 }, (_, round) => tasks[round % tasks.length])
    const answers = await Effect.runPromise(Effect.forEach(many, worker.run, { concurrency: "unbounded" }))
    expect(answers).toEqual(many.map(runPaymentTask))
    expect(answers[0]).toHaveLength(4)
    expect(answers[1]).toHaveLength(12)
  })

  it("hands the tasks to the threads in turn", async () => {
    const marking = new URL("../support/MarkingWorkerThread.ts", import.meta.url)
    const worker = makePaymentWorker([lane(marking), lane(marking)])
    const answers = await Effect.runPromise(Effect.forEach(Array.from({ length: 4 }, () => tasks[1]), worker.run, { concurrency: "unbounded" }))
    const [first, second] = answers.map((answer) => String(answer[0]))
    expect(first).toMatch(/^thread \d+$/)
    expect(second).toMatch(/^thread \d+$/)
    expect(second).not.toBe(first)
    expect(answers.map((answer) => String(answer[0]))).toEqual([first, second, first, second])
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
  })

  it("reports a task that fails as a computation in the error channel", async () => {
    const worker = makePaymentWorker([lane()])
    const failed = await Effect.runPromise(Effect.flip(worker.bitcoinAddresses("not-an-extended-key", 0, 1)))
    expect(failed._tag).toBe("PaymentTaskFailed")
  })

  it("builds an invoice's options in one task: shared EVM addresses derived once, QR codes of their URIs", async () => {
    const worker = makePaymentWorker([lane()])
    const built = await Effect.runPromise(worker.options(rails, optionRequests()))
    const options = built.map((outcome) => (outcome.ok ? outcome.option : undefined))
    expect(options.map((option) => option?.network)).toEqual(["ethereum", "arbitrum", "base", "bitcoin"])
    const [walletContract, arbitrum, base, bitcoin] = options
    expect(walletContract?.optionPayload).toMatchObject({ railType: "wallet_contract", recipient: DEMO_KEYS.evmRecipient })
    expect(walletContract?.qrCode).toBeNull()
    // Same extended key and index on two networks: one deposit address.
    expect(arbitrum?.destinationAddress).toMatch(/^0x[0-9a-fA-F]{40}$/)
    expect(base?.destinationAddress).toBe(arbitrum?.destinationAddress)
    expect(bitcoin?.destinationAddress).toBe("bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu")
    for (const option of [arbitrum, base, bitcoin]) expect(decodeQrSvg(option!.qrCode!)).toBe(option!.paymentUri)
  })

  it("answers an option it cannot build with the reason, and builds the others", async () => {
    const worker = makePaymentWorker([lane()])
    const built: ReadonlyArray<OptionOutcome> = await Effect.runPromise(worker.options(rails, optionRequests("not-an-extended-key")))
    expect(built.map((outcome) => outcome.ok)).toEqual([true, false, false, true])
    expect(built[1]).toMatchObject({ ok: false, message: expect.any(String) })
  })
})
