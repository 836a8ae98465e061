import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SuiteMerchant, suiteOptions, testApp } from "../support/TestApp.ts"

const settingsPath = "/api/dashboard/checkout-settings"

/** The merchant's settings as GET answers them, with `change` applied, sent back by PUT. */
const putWith = (change: (body: Record<string, unknown>) => Record<string, unknown>) =>
  Effect.gen(function*() {
    const merchant = yield* SuiteMerchant
    const current = yield* merchant.dashboard(settingsPath)
    return yield* merchant.dashboard(settingsPath, { method: "PUT", body: change(current.body) })
  })

it.layer(SuiteMerchant.layer().pipe(Layer.provideMerge(testApp())), suiteOptions)((it) => {
  describe("checkout settings' embedOrigins (issue #57)", () => {
    it.effect("are empty at first; PUT stores them, GET returns them, and a PUT without them keeps them", () =>
      Effect.gen(function*() {
        const merchant = yield* SuiteMerchant
        expect((yield* merchant.dashboard(settingsPath)).body.embedOrigins).toEqual([])
        const origins = ["https://shop.example", "http://127.0.0.1:5173", "http://localhost:3000", "http://[::1]:8080"]
        const saved = yield* putWith((body) => ({ ...body, embedOrigins: origins }))
        expect(saved.status, JSON.stringify(saved.body)).toBe(200)
        expect(saved.body.embedOrigins).toEqual(origins)
        const kept = yield* putWith(({ embedOrigins: _, ...body }) => ({ ...body, issuedBy: "Another name" }))
        expect(kept.body).toMatchObject({ issuedBy: "Another name", embedOrigins: origins })
        const cleared = yield* putWith((body) => ({ ...body, embedOrigins: [] }))
        expect(cleared.body.embedOrigins).toEqual([])
      }))

    it.effect("refuses an entry that is not an allowed origin, naming it, and more than 10, with 400 and nothing saved", () =>
      Effect.gen(function*() {
        const cases: ReadonlyArray<readonly [unknown, string]> = [
          [["https://shop.example/checkout"], "embedOrigins[0] must be an origin exactly as browsers write it (https://shop.example): no path, no trailing slash"],
          [["https://ok.example", "http://shop.example"], "embedOrigins[1] must be an https:// origin (http:// only for loopback addresses outside production)"],
          [Array.from({ length: 11 }, (_, index) => `https://shop${index}.example`), "embedOrigins must have at most 10 origins"]
        ]
        for (const [embedOrigins, error] of cases) {
          const refused = yield* putWith((body) => ({ ...body, embedOrigins }))
          expect(refused).toMatchObject({ status: 400, body: { error } })
        }
        const notStrings = yield* putWith((body) => ({ ...body, embedOrigins: "https://shop.example" }))
        expect(notStrings.status).toBe(400)
        expect((yield* (yield* SuiteMerchant).dashboard(settingsPath)).body.embedOrigins).toEqual([])
      }))
  })
})
