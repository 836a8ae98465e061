import { Cause, Effect, Exit, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { Secrets } from "../../src/accounts/Secrets.ts"
import { AppConfig, parseConfig } from "../../src/config/AppConfig.ts"

describe("configuration", () => {
  it("has working defaults", () => {
    const config = parseConfig({})
    expect(config).toMatchObject({ env: "development", host: "127.0.0.1", port: 3000, dataDir: "./data", role: "all" })
    expect(config.publicUrl).toBe("http://127.0.0.1:3000")
    expect(config.databaseUrl).toBeUndefined()
  })

  it("derives the public URL from the listen address unless given", () => {
    expect(parseConfig({ PORT: "8080", HOST: "0.0.0.0" }).publicUrl).toBe("http://127.0.0.1:8080")
    expect(parseConfig({ CHECKOUT_PUBLIC_URL: "https://pay.example.com/" }).publicUrl).toBe("https://pay.example.com")
  })

  it("names the variable of a bad value", () => {
    expect(() => parseConfig({ PORT: "abc" })).toThrow(/^PORT must be an integer/)
    expect(() => parseConfig({ CHECKOUT_ROLE: "boss" })).toThrow(/CHECKOUT_ROLE must be one of api, workers, all/)
    expect(() => parseConfig({ DATABASE_URL: "mysql://x" })).toThrow(/DATABASE_URL must be a URL/)
    expect(() => parseConfig({ CHECKOUT_WEBHOOK_ALLOW_LOOPBACK: "maybe" })).toThrow(/true or false/)
    expect(() => parseConfig({ CHECKOUT_PAYMENT_WORKER_THREADS: "17" })).toThrow(/CHECKOUT_PAYMENT_WORKER_THREADS must be an integer from 0 to 16/)
  })

  it("runs payment work on one worker thread unless told otherwise", () => {
    expect(parseConfig({}).paymentWorkerThreads).toBe(1)
    expect(parseConfig({ CHECKOUT_PAYMENT_WORKER_THREADS: "0" }).paymentWorkerThreads).toBe(0)
  })

  it("pipelines database statements unless told otherwise", () => {
    expect(parseConfig({}).databaseMultiplex).toBe(true)
    expect(parseConfig({ CHECKOUT_DB_MULTIPLEX: "false" }).databaseMultiplex).toBe(false)
    expect(() => parseConfig({ CHECKOUT_DB_MULTIPLEX: "sometimes" })).toThrow(/CHECKOUT_DB_MULTIPLEX must be true or false/)
  })

  it("refuses production without secrets", () => {
    expect(() => parseConfig({ CHECKOUT_ENV: "production" })).toThrow(/CHECKOUT_JWT_SECRET is required/)
    const secrets = { CHECKOUT_JWT_SECRET: "j".repeat(32), CHECKOUT_ENCRYPTION_KEY: "k".repeat(32) }
    const config = parseConfig({ CHECKOUT_ENV: "production", ...secrets })
    expect(config.demo).toBe(false)
    expect(config.webhookAllowLoopback).toBe(false)
  })

  it("never falls back to database-kept secrets in production", async () => {
    expect(() => parseConfig({ CHECKOUT_ENV: "production", CHECKOUT_ENCRYPTION_KEY: "k".repeat(40) }))
      .toThrow(/CHECKOUT_JWT_SECRET is required when CHECKOUT_ENV=production/)
    const production = { ...parseConfig({ CHECKOUT_ENV: "test" }), env: "production" as const, jwtSecret: undefined }
    let touched = false
    const database = Layer.succeed(SqlClient.SqlClient, new Proxy({}, { get: () => (touched = true) }) as SqlClient.SqlClient)
    const exit = await Effect.runPromiseExit(Effect.scoped(Layer.build(
      Secrets.layer.pipe(Layer.provide([Layer.succeed(AppConfig, production), database]))
    )))
    expect(Exit.isFailure(exit) && Cause.pretty(exit.cause)).toMatch(/jwt_secret must come from configuration in production/)
    expect(touched).toBe(false)
  })

  it("keeps secrets redacted in the configuration", () => {
    const config = parseConfig({ CHECKOUT_JWT_SECRET: "j".repeat(40), CHECKOUT_ENCRYPTION_KEY: "e".repeat(40) })
    expect(JSON.stringify(config)).not.toContain("jjjj")
    expect(String(config.encryptionKey)).toBe("<redacted>")
    expect(Redacted.value(config.jwtSecret!)).toBe("j".repeat(40))
  })
})
