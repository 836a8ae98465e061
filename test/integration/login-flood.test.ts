import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { makePasswordHasher } from "../../src/accounts/Passwords.ts"
import { parseConfig } from "../../src/config/AppConfig.ts"
import { publicRequest, startTestApp, type TestApp } from "../support/TestApp.ts"

/** A production configuration that starts: its secrets, public URL and database. */
const PRODUCTION = {
  CHECKOUT_ENV: "production",
  CHECKOUT_JWT_SECRET: "x".repeat(40),
  CHECKOUT_ENCRYPTION_KEY: "y".repeat(40),
  CHECKOUT_PUBLIC_URL: "https://pay.example.com",
  CHECKOUT_DATA_DIR: "memory://"
}

let app: TestApp

beforeAll(async () => {
  app = await startTestApp({ signupsPerMinute: 2, loginAddressAttemptsPerMinute: 3, trustedProxies: ["127.0.0.1"], rateLimitStoreTimeoutMs: 30_000 })
})
afterAll(async () => {
  await app?.close()
})

const post = (path: string, body: unknown, from: string) =>
  publicRequest(app.baseUrl, path, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": from },
    body: JSON.stringify(body)
  })

describe("login and sign-up floods", () => {
  it("limits logins per client address whatever the email, and sign-ups per client address", async () => {
    const login = (from: string) => post("/api/auth/login", { email: `${crypto.randomUUID()}@flood.test`, password: "whatever it is" }, from)
    for (let i = 0; i < 3; i++) expect((await login("198.51.100.1")).status).toBe(401)
    const refused = await login("198.51.100.1")
    expect(refused.status).toBe(429)
    expect(refused.body.error).toMatch(/^Rate limit exceeded\. Retry after \d+ seconds\.$/)
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/)
    expect((await login("198.51.100.2")).status).toBe(401)

    const signUp = (from: string) => post("/api/auth/signup", { email: `${crypto.randomUUID()}@flood.test`, password: "long enough password" }, from)
    expect((await signUp("198.51.100.3")).status).toBe(201)
    expect((await signUp("198.51.100.3")).status).toBe(201)
    expect((await signUp("198.51.100.3")).status).toBe(429)
    expect((await signUp("198.51.100.4")).status).toBe(201)
  })

  it("rehashes a weaker stored password at the next good login, transparently", async () => {
    const weak = await Effect.runPromise(Effect.flatMap(makePasswordHasher({ logN: 10, concurrency: 1, waitMs: 60_000 }), (hasher) => hasher.hash("correct horse battery")))
    expect(weak.startsWith("scrypt$1024$8$1$")).toBe(true)
    const email = `${crypto.randomUUID()}@rehash.test`
    const id = crypto.randomUUID()
    const storedHash = () =>
      app.run(
        Effect.flatMap(SqlClient.SqlClient,
          (sql) => sql<{ passwordHash: string }>`SELECT password_hash FROM merchants WHERE id = ${id}`.pipe(Effect.map((rows) => rows[0].passwordHash)))
      )
    await app.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`INSERT INTO merchants ${sql.insert({ id, email, is_demo: false, password_hash: weak })}`))
    expect((await post("/api/auth/login", { email, password: "wrong password!" }, "198.51.100.9")).status).toBe(401)
    expect(await storedHash()).toBe(weak)
    expect((await post("/api/auth/login", { email, password: "correct horse battery" }, "198.51.100.9")).status).toBe(200)
    const upgraded = await storedHash()
    expect(upgraded.startsWith(`scrypt$${2 ** parseConfig({ CHECKOUT_ENV: "test" }).passwords.logN}$8$1$`)).toBe(true)
    expect((await post("/api/auth/login", { email, password: "correct horse battery" }, "198.51.100.10")).status).toBe(200)
    expect(await storedHash()).toBe(upgraded)
  })

  it("uses OWASP's scrypt cost outside tests and refuses a weaker one in production", () => {
    expect(parseConfig({}).passwords.logN).toBe(17)
    expect(() => parseConfig({ ...PRODUCTION, CHECKOUT_PASSWORD_SCRYPT_LOG_N: "14" }))
      .toThrow(/CHECKOUT_PASSWORD_SCRYPT_LOG_N must be an integer from 17 to 20/)
  })
})

describe("a login flood that outruns password hashing", () => {
  // The production cost (N = 2^17: over a second per hash on a busy two-core machine) and the
  // default slots and request budget: thirty logins cannot all hash within the budget.
  it("answers 429 with Retry-After to the logins whose hash cannot start in time, never 503, and logs no database failure", { timeout: 60_000 }, async () => {
    const config = parseConfig(PRODUCTION)
    const flooded = await startTestApp({ passwords: config.passwords, requestTimeoutMs: config.requestTimeoutMs, trustedProxies: ["127.0.0.1"] })
    const logged: Array<string> = []
    const spies = (["log", "info", "warn", "error", "debug"] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation((...args: Array<unknown>) => {
        logged.push(args.map(String).join(" "))
      })
    )
    try {
      const email = `${crypto.randomUUID()}@flood.test`
      const login = (body: unknown) =>
        publicRequest(flooded.baseUrl, "/api/auth/login", {
          method: "POST",
          headers: { "content-type": "application/json", "x-forwarded-for": "198.51.100.50" },
          body: JSON.stringify(body)
        })
      const signup = await publicRequest(flooded.baseUrl, "/api/auth/signup", {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": "198.51.100.51" },
        body: JSON.stringify({ email, password: "correct horse battery" })
      })
      expect(signup.status).toBe(201)
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, index) =>
          login(index % 3 === 0 ? { email, password: "correct horse battery" } : { email: `${crypto.randomUUID()}@flood.test`, password: "whatever it is" }))
      )
      const statuses = answers.map((answer) => answer.status)
      expect(statuses.filter((status) => ![200, 401, 429].includes(status))).toEqual([])
      expect(statuses.filter((status) => status === 200 || status === 401).length).toBeGreaterThan(0)
      const refused = answers.filter((answer) => answer.status === 429)
      expect(refused.length).toBeGreaterThan(0)
      for (const answer of refused) {
        expect(answer.body.error).toMatch(/^Rate limit exceeded\. Retry after \d+ seconds\.$/)
        expect(answer.headers.get("retry-after")).toMatch(/^\d+$/)
      }
      expect(logged.filter((line) => line.includes("Database unavailable"))).toEqual([])
    } finally {
      for (const spy of spies) spy.mockRestore()
      await flooded.close()
    }
  })
})
