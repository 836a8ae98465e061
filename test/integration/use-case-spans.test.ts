import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Tracer } from "effect"
import { ApiKeyAdmission } from "../../src/accounts/ApiKeyAdmission.ts"
import { RateLimits } from "../../src/accounts/RateLimits.ts"
import { CheckoutSettingsRepo } from "../../src/payments/CheckoutSettingsRepo.ts"
import { suiteOptions } from "../support/TestApp.ts"
import { newInvoice, SuiteAccount, testServices } from "../support/TestLayers.ts"

/** The names of the spans `effect` opens (Effect.fn, withSpan, the SQL client's), in order. */
const spanNames = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const names: Array<string> = []
    const tracer = Tracer.make({
      span(options) {
        names.push(options.name)
        return new Tracer.NativeSpan(options)
      }
    })
    yield* Effect.withTracer(effect, tracer)
    return names
  })

it.layer(SuiteAccount.layer().pipe(Layer.provideMerge(testServices())), suiteOptions)((it) => {
  describe("decisions.md: spans", () => {
    it.effect("a use-case method runs in a span of its name; the per-request hot-path calls open none of their own", () =>
      Effect.gen(function*() {
        const { merchantId, apiKey } = yield* SuiteAccount
        const created = yield* spanNames(newInvoice(merchantId, { amountUsd: 3 }))
        expect(created[0]).toBe("Invoices.create")
        // Besides the SQL client's statement spans ("postgres"), only methods named `Service.method`.
        expect(created.filter((name) => name !== "postgres" && !/^[A-Z]\w*\.\w+$/.test(name))).toEqual([])
        const admission = yield* ApiKeyAdmission
        const limits = yield* RateLimits
        const settings = yield* CheckoutSettingsRepo
        const hotPath = yield* spanNames(Effect.all([Effect.orDie(admission.admit(apiKey)), limits.api(merchantId), settings.find(merchantId, true)]))
        expect(hotPath.filter((name) => name !== "postgres")).toEqual([])
      }))
  })
})
