import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { publicRequest, startTestApp } from "../support/TestApp.ts"

const run = promisify(execFile)
const dataDir = mkdtempSync(join(tmpdir(), "checkout-cli-"))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const cli = (...args: Array<string>) =>
  run(process.execPath, ["--experimental-strip-types", "--disable-warning=ExperimentalWarning", "scripts/cli.ts", ...args], {
    env: { ...process.env, CHECKOUT_DATA_DIR: dataDir, CHECKOUT_ENV: "test" }
  })

const createInvoice = async (baseUrl: string, apiKey: string) =>
  publicRequest(baseUrl, "/api/checkout/invoices", {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": apiKey },
    body: JSON.stringify({ amountUsd: 5 })
  })

/** The embedded database serves one process at a time: the service stops while the command runs. */
const withApp = async <A>(use: (baseUrl: string) => Promise<A>) => {
  const app = await startTestApp({ dataDir })
  try {
    return await use(app.baseUrl)
  } finally {
    await app.close()
  }
}

describe("operator command", () => {
  it("creates an account with a generated password, shown once, that logs in (sign-up closed)", async () => {
    const email = `${crypto.randomUUID()}@merchant.test`
    const created = (await cli("account", "create", email)).stdout
    const password = /dashboard password \(shown once[^)]*\): (\S+)$/m.exec(created)?.[1]
    expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/)
    await expect(cli("account", "create", email)).rejects.toMatchObject({ stderr: expect.stringMatching(/exists already/) })
    const app = await startTestApp({ dataDir, signup: "closed" })
    try {
      const signup = await publicRequest(app.baseUrl, "/api/auth/signup", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: `other-${email}`, password: "a long passphrase here" })
      })
      expect(signup.status).toBe(403)
      const login = await publicRequest(app.baseUrl, "/api/auth/login", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email, password })
      })
      expect(login.status).toBe(200)
    } finally {
      await app.close()
    }
  }, 180_000)

  it("disables and enables an account, and blocks and unblocks billing", async () => {
    const app = await startTestApp({ dataDir })
    const merchant = await app.createMerchant()
    await app.close()

    expect((await cli("account", "disable", merchant.email)).stdout).toMatch(/disabled/)
    expect(await withApp((baseUrl) => createInvoice(baseUrl, merchant.apiKey))).toMatchObject({ status: 403, body: { error: "Forbidden" } })

    await cli("account", "enable", merchant.email)
    await cli("billing", "block", merchant.email)
    const blocked = await withApp((baseUrl) => createInvoice(baseUrl, merchant.apiKey))
    expect(blocked.status).toBe(403)
    expect(blocked.body.error).toMatch(/billing/)

    await cli("billing", "unblock", merchant.email)
    expect((await withApp((baseUrl) => createInvoice(baseUrl, merchant.apiKey))).status).toBe(201)
    await expect(cli("account", "disable", "nobody@example.com")).rejects.toMatchObject({ stderr: expect.stringMatching(/no account/) })
  }, 180_000)
})
