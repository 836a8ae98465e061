import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { SuiteMerchant, suiteOptions, testApp, TestServer } from "../support/TestApp.ts"

// `npm run simulate` as a process, against a running service: what the README's first steps type.
const simulate = (...args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const { baseUrl } = yield* TestServer
    const { sessionToken } = yield* SuiteMerchant
    const run = promisify(execFile)
    const { stdout } = yield* Effect.promise(() =>
      run(process.execPath, ["--experimental-strip-types", "--disable-warning=ExperimentalWarning", "scripts/simulate.ts", ...args], {
        env: { ...process.env, CHECKOUT_URL: baseUrl, CHECKOUT_TOKEN: sessionToken },
        encoding: "utf8"
      })
    )
    return stdout
  })

const newInvoice = (amountUsd: number) =>
  Effect.flatMap(SuiteMerchant, (merchant) => Effect.map(merchant.api("/api/checkout/invoices", { body: { amountUsd } }), (answer) => answer.body))

it.layer(SuiteMerchant.layer().pipe(Layer.provideMerge(testApp())), suiteOptions)((it) => {
  describe("npm run simulate -- pay", () => {
    it.effect("pays the invoice's default option in full with a fresh transaction, so a second invoice never collides, and prints the ids npm masks", () =>
      Effect.gen(function*() {
        const first = yield* newInvoice(5)
        const second = yield* newInvoice(7)
        const hashes: Array<string | undefined> = []
        for (const invoice of [first, second]) {
          const option = invoice.paymentOptions.find((entry: { id: string }) => entry.id === invoice.defaultPaymentOptionId)
          const output = yield* simulate("pay", invoice.id, "--confirmations", "100")
          expect(output).toContain(
            `paying invoice ${invoice.id}: option ${option.id} (${option.assetCode} on ${option.network}, the invoice's default), amount ${option.quotedAmount}`
          )
          expect(output).toContain(`invoice ${invoice.id}: confirmed`)
          hashes.push(output.match(/^transaction (0x[0-9a-f]{64}) \(for confirm and reorg\)$/m)?.[1])
        }
        expect(hashes[0]).toBeDefined()
        expect(hashes[1]).toBeDefined()
        expect(hashes[0]).not.toBe(hashes[1])
        // The printed transaction is the one to use next.
        expect(yield* simulate("reorg", first.id, hashes[0]!)).toContain("invalidated")
      }))

    it.effect("still takes an option and an amount, in either order", () =>
      Effect.gen(function*() {
        const invoice = yield* newInvoice(10)
        const option = invoice.paymentOptions.at(-1)
        const output = yield* simulate("pay", invoice.id, "1", option.id)
        expect(output).toContain(`option ${option.id} (${option.assetCode} on ${option.network}), amount 1`)
        expect(output).toMatch(new RegExp(`invoice ${invoice.id}: (partially_paid|payment_detected)`))
      }))
  })
})
