import { createServer, type Server } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { spawnService } from "../support/ServiceProcess.ts"

/** `npm start`'s process with `env`: its exit code and what it printed on stderr (once it exits). */
const start = (env: Record<string, string>) =>
  new Promise<{ code: number | null; stderr: ReadonlyArray<string> }>((resolve) => {
    const child = spawnService({ CHECKOUT_DATA_DIR: "memory://", CHECKOUT_DEMO: "false", ...env })
    child.stdout!.resume()
    let stderr = ""
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    const killer = setTimeout(() => child.kill("SIGKILL"), 60_000)
    child.on("exit", (code) => {
      clearTimeout(killer)
      resolve({ code, stderr: stderr.split("\n").filter((line) => line.trim() !== "") })
    })
  })

let blocker: Server
let busyPort: number

beforeAll(async () => {
  blocker = createServer((socket) => socket.destroy())
  await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve))
  busyPort = (blocker.address() as { port: number }).port
})
afterAll(() => new Promise<void>((resolve) => blocker.close(() => resolve())))

describe("a service that cannot start says why in one line", () => {
  it("a port in use names the port", { timeout: 90_000 }, async () => {
    expect(await start({ PORT: String(busyPort) })).toEqual({
      code: 1,
      stderr: [`Start-up failed: port ${busyPort} on 127.0.0.1 is already in use (set PORT, or stop the other process)`]
    })
  })

  it("an unreachable database names DATABASE_URL, its host and the reason", { timeout: 90_000 }, async () => {
    expect(await start({ DATABASE_URL: `postgres://postgres@127.0.0.1:${busyPort}/checkout`, CHECKOUT_DB_CONNECT_TIMEOUT_MS: "2000" })).toMatchObject({
      code: 1,
      stderr: [expect.stringMatching(new RegExp(`^Start-up failed: cannot use the database at DATABASE_URL \\(127\\.0\\.0\\.1:${busyPort}/checkout\\): .+`))]
    })
  })

  it("every configuration error at once, each naming its variable", { timeout: 90_000 }, async () => {
    expect(await start({ PORT: "x", CHECKOUT_CONFIRMATIONS_BASE: "abc", CHECKOUT_ROLE: "boss" })).toEqual({
      code: 1,
      stderr: [
        "Configuration error: PORT must be an integer from 0 to 65535 (got \"x\")",
        "Configuration error: CHECKOUT_ROLE must be one of api, workers, all (got \"boss\")",
        "Configuration error: CHECKOUT_CONFIRMATIONS_BASE must be an integer from 1 to 10000 (got \"abc\")"
      ]
    })
  })

  it("production refuses the public demo, the default public URL and a silent embedded database", { timeout: 90_000 }, async () => {
    const secrets = { CHECKOUT_JWT_SECRET: "j".repeat(32), CHECKOUT_ENCRYPTION_KEY: "k".repeat(32) }
    expect(await start({ CHECKOUT_ENV: "production", ...secrets, CHECKOUT_DEMO: "true", CHECKOUT_DATA_DIR: "" })).toEqual({
      code: 1,
      stderr: [
        "Configuration error: CHECKOUT_DEMO=true is refused when CHECKOUT_ENV=production: the demo merchant's password and wallets are public",
        "Configuration error: CHECKOUT_PUBLIC_URL is required when CHECKOUT_ENV=production: it is the base of every paymentUrl",
        "Configuration error: DATABASE_URL is required when CHECKOUT_ENV=production (a PostgreSQL server); to run on the embedded database instead, set CHECKOUT_DATA_DIR explicitly"
      ]
    })
  })
})

describe("a production start", () => {
  it("says where it listens, on which database, and that unwatched networks cannot be enabled", { timeout: 90_000 }, async () => {
    const child = spawnService({
      CHECKOUT_ENV: "production",
      CHECKOUT_JWT_SECRET: "j".repeat(32),
      CHECKOUT_ENCRYPTION_KEY: "k".repeat(32),
      CHECKOUT_PUBLIC_URL: "https://pay.example.com",
      CHECKOUT_DATA_DIR: "memory://",
      PORT: "0"
    })
    let output = ""
    const listening = new Promise<void>((resolve) => {
      const read = (chunk: Buffer) => {
        output += chunk.toString("utf8")
        if (output.includes("Checkout service listening on")) resolve()
      }
      child.stdout!.on("data", read)
      child.stderr!.on("data", read)
    })
    try {
      await listening
      expect(output).toMatch(
        /Checkout service listening on http:\/\/127\.0\.0\.1:\d+ \(public URL https:\/\/pay\.example\.com, production, role all, the embedded database in memory:\/\/\)/
      )
      expect(output).toContain("not watched (their payment methods cannot be enabled): bitcoin, ethereum, arbitrum, base, solana")
      expect(output).not.toContain("simulator only")
      expect(output).not.toContain("Demo merchant")
    } finally {
      child.kill("SIGTERM")
    }
  })
})
