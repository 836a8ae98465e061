import { PGlite } from "@electric-sql/pglite"
import { HDKey } from "@scure/bip32"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { DerivationLedger } from "../../src/payments/DerivationLedger.ts"
import { spawnService } from "../support/ServiceProcess.ts"
import { startTestApp } from "../support/TestApp.ts"

// Issue #56, item 3, as an operator meets it: `npm start` on a database whose counter is behind
// what it issued stops with one line naming the way out, and `data start-index` is that way.

const dataDir = mkdtempSync(join(tmpdir(), "checkout-guard-"))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))
const { DATABASE_URL: _shared, ...env } = process.env
const nodeArgs = ["--experimental-strip-types", "--disable-warning=ExperimentalWarning"]

/** `npm start` on the directory: its exit code and stderr lines, or "listening" once it says so (then stopped). */
const start = () =>
  new Promise<{ code: number | null; stderr: ReadonlyArray<string> } | "listening">((resolve) => {
    const child = spawnService({ CHECKOUT_DATA_DIR: dataDir, CHECKOUT_DEMO: "false", PORT: "0" })
    let stderr = ""
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    let listening = false
    child.stdout!.on("data", (chunk: Buffer) => {
      if (!listening && chunk.toString("utf8").includes("Checkout service listening")) {
        listening = true
        child.kill("SIGTERM")
      }
    })
    child.on("exit", (code) => resolve(listening ? "listening" : { code, stderr: stderr.split("\n").filter((line) => line.trim() !== "") }))
  })

describe("a derivation counter behind what the database issued", () => {
  it("stops npm start with the key, both numbers and the command; data start-index lets it start", { timeout: 240_000 }, async () => {
    const xpub = HDKey.fromMasterSeed(crypto.getRandomValues(new Uint8Array(32))).derive("m/44'/60'/0'").publicExtendedKey
    const app = await startTestApp({ databaseUrl: undefined, dataDir })
    await app.run(Effect.flatMap(DerivationLedger, (ledger) => ledger.raiseStart(xpub, 8)))
    await app.close()
    // The counters table restored from an older backup than the rest, say.
    const db = await PGlite.create(dataDir)
    await db.query("UPDATE derivation_counters SET next_index = 2 WHERE xpub = $1", [xpub])
    await db.close()

    expect(await start()).toEqual({
      code: 1,
      stderr: [
        `Start-up failed: the derivation counter of ${xpub} stands at 2, but index 7 was already issued in this database: ` +
        `deriving from it would hand out deposit addresses of earlier invoices again (set its start index to at least 8: ` +
        `npm run cli -- data start-index ${xpub} 8, or the payment method's startIndex in the checkout settings)`
      ]
    })
    const { stdout } = await promisify(execFile)(process.execPath, [...nodeArgs, "scripts/cli.ts", "data", "start-index", xpub, "8"], {
      env: { ...env, CHECKOUT_DATA_DIR: dataDir, CHECKOUT_ENV: "test" }
    })
    expect(stdout.trim()).toBe(`the next deposit address of ${xpub} is derived at index 8`)
    expect(await start()).toBe("listening")
  })
})
