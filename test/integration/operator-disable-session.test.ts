import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { publicRequest, startTestApp } from "../support/TestApp.ts"

const run = promisify(execFile)
const dataDir = mkdtempSync(join(tmpdir(), "checkout-cli-disable-"))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const cli = (...args: Array<string>) =>
  run(process.execPath, ["--experimental-strip-types", "--disable-warning=ExperimentalWarning", "scripts/cli.ts", ...args], {
    env: { ...process.env, CHECKOUT_DATA_DIR: dataDir, CHECKOUT_ENV: "test" }
  })

/** The embedded database serves one process at a time: the service stops while the command runs. */
const withApp = async <A>(use: (app: Awaited<ReturnType<typeof startTestApp>>) => Promise<A>) => {
  const app = await startTestApp({ dataDir })
  try {
    return await use(app)
  } finally {
    await app.close()
  }
}

describe("an account disabled by the operator", () => {
  it("answers its sessions 403 Forbidden (the spec's account rule), and enabling restores them", { timeout: 180_000 }, async () => {
    const merchant = await withApp((app) => app.createMerchant())
    const keys = (baseUrl: string) =>
      publicRequest(baseUrl, `/api/users/${merchant.merchantId}/checkout-api-keys`, { headers: { authorization: `Bearer ${merchant.sessionToken}` } })

    expect((await cli("account", "disable", merchant.email)).stdout).toMatch(/disabled/)
    await withApp(async (app) => {
      expect(await keys(app.baseUrl)).toMatchObject({ status: 403, body: { error: "Forbidden" } })
      expect((await publicRequest(app.baseUrl, "/api/dashboard/invoices", { headers: { authorization: `Bearer ${merchant.sessionToken}` } })).status).toBe(403)
    })

    expect((await cli("account", "enable", merchant.email)).stdout).toMatch(/enabled/)
    await withApp(async (app) => {
      expect((await keys(app.baseUrl)).status).toBe(200)
    })
  })
})
