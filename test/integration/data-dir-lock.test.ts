import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { scriptEnv, startScript } from "../support/ScriptProcess.ts"
import { startTestApp } from "../support/TestApp.ts"

// Issue #56: PGlite keeps no lock on its directory, so the service does (docs/database-moves.md):
// a directory a running service holds is refused by a second one, and a crashed service's lock
// does not hold it.

const dataDir = mkdtempSync(join(tmpdir(), "checkout-lock-"))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const service = () => startScript("src/main.ts", [], scriptEnv({ CHECKOUT_DATA_DIR: dataDir, CHECKOUT_DEMO: "false", PORT: "0" }))

describe("the embedded database's directory lock", () => {
  it("refuses a second service while the first runs; a killed service's lock is stale", async () => {
    const first = service()
    try {
      await first.line(/listening on/)
      expect(existsSync(join(dataDir, "checkout-service.pid"))).toBe(true)
      await expect(startTestApp({ databaseUrl: undefined, dataDir })).rejects.toThrow(`the embedded database in ${dataDir} is in use by process ${first.child.pid}`)
    } finally {
      process.kill(-first.child.pid!, "SIGKILL")
      await first.stop()
    }
    expect(existsSync(join(dataDir, "checkout-service.pid"))).toBe(true)
    const next = await startTestApp({ databaseUrl: undefined, dataDir })
    await next.close()
    expect(existsSync(join(dataDir, "checkout-service.pid"))).toBe(false)
  }, 120_000)
})
