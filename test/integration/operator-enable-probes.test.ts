import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { Sessions } from "../../src/accounts/Sessions.ts"
import { publicRequest, startTestApp } from "../support/TestApp.ts"

const run = promisify(execFile)
const dataDir = mkdtempSync(join(tmpdir(), "checkout-cli-probes-"))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const THRESHOLD = 3

const cli = (...args: Array<string>) =>
  run(process.execPath, ["--experimental-strip-types", "--disable-warning=ExperimentalWarning", "scripts/cli.ts", ...args], {
    env: { ...process.env, CHECKOUT_DATA_DIR: dataDir, CHECKOUT_ENV: "test", CHECKOUT_PROBE_THRESHOLD: String(THRESHOLD) }
  })

/** The embedded database serves one process at a time: the service stops while the command runs. */
const withApp = async <A>(use: (app: Awaited<ReturnType<typeof startTestApp>>) => Promise<A>) => {
  const app = await startTestApp({ dataDir, probeThreshold: THRESHOLD })
  try {
    return await use(app)
  } finally {
    await app.close()
  }
}

describe("an account enabled by the operator", () => {
  it("starts from no probes: one more probe does not disable it again", async () => {
    const [prober, victim] = await withApp(async (app) => [await app.createMerchant(), await app.createMerchant()])
    const probe = (baseUrl: string, token = prober.sessionToken) =>
      publicRequest(baseUrl, `/api/users/${victim.merchantId}/checkout-api-keys`, { headers: { authorization: `Bearer ${token}` } })
    const createInvoice = (baseUrl: string) =>
      publicRequest(baseUrl, "/api/checkout/invoices", {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": prober.apiKey },
        body: JSON.stringify({ amountUsd: 5 })
      })

    await withApp(async (app) => {
      for (let i = 0; i < THRESHOLD; i++) expect((await probe(app.baseUrl)).status).toBe(404)
      expect(await createInvoice(app.baseUrl)).toMatchObject({ status: 403, body: { error: "Forbidden" } })
    })

    expect((await cli("account", "enable", prober.email)).stdout).toMatch(/enabled/)

    await withApp(async (app) => {
      expect((await createInvoice(app.baseUrl)).status).toBe(201)
      // Disabling revoked the prober's sessions: it signs in again.
      const { token } = await app.run(Effect.gen(function*() {
        return yield* (yield* Sessions).issue(prober.merchantId)
      }))
      const again = await probe(app.baseUrl, token)
      expect(again.status).toBe(404)
      expect((await createInvoice(app.baseUrl)).status).toBe(201)
      expect((await publicRequest(app.baseUrl, `/api/users/${prober.merchantId}/checkout-api-keys`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
    })
  }, 180_000)
})
