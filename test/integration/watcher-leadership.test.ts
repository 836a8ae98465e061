import { Context, Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { WatcherLeadership } from "../../src/chains/WatcherLeadership.ts"
import { startTestApp, type TestApp } from "../support/TestApp.ts"

const onPostgres = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== ""
if (!onPostgres) console.log("skipped: chain watcher leadership across instances (DATABASE_URL is not set; PGlite has one process)")

let app: TestApp
beforeAll(async () => {
  app = await startTestApp()
})
afterAll(async () => {
  await app?.close()
})

/** A leadership service as another process would build it: its own reserved connection. */
const instance = async () => {
  const scope = await Effect.runPromise(Scope.make())
  const context = await app.run(Layer.buildWithScope(Layer.fresh(WatcherLeadership.layer), scope))
  const leadership = Context.get(context, WatcherLeadership)
  return {
    lead: (network: string) => app.run(leadership.lead(network)),
    stop: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

describe.skipIf(!onPostgres)("chain watcher leadership", () => {
  it("gives each network to one instance at a time, and to another when the leader stops", async () => {
    const network = `test-${crypto.randomUUID()}`
    const first = await instance()
    const second = await instance()
    try {
      expect(await first.lead(network)).toBe(true)
      expect(await second.lead(network)).toBe(false)
      expect(await first.lead(network)).toBe(true)
      // Another network is free for the second instance.
      expect(await second.lead(`${network}-other`)).toBe(true)
      await first.stop()
      expect(await second.lead(network)).toBe(true)
    } finally {
      await first.stop()
      await second.stop()
    }
  })
})

describe.skipIf(onPostgres)("chain watcher leadership on the embedded database", () => {
  it("always leads: one process", async () => {
    const only = await instance()
    expect(await only.lead("ethereum")).toBe(true)
    await only.stop()
  })
})
