import { Cause, Effect, Exit, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Secrets } from "../../src/accounts/Secrets.ts"
import { readFileSync } from "node:fs"
import { AppConfig, ConfigError, declaredVariables, parseConfig } from "../../src/config/AppConfig.ts"

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

  const PRODUCTION = {
    CHECKOUT_ENV: "production",
    CHECKOUT_JWT_SECRET: "j".repeat(32),
    CHECKOUT_ENCRYPTION_KEY: "k".repeat(32),
    CHECKOUT_PUBLIC_URL: "https://pay.example.com",
    DATABASE_URL: "postgres://checkout@db.internal/checkout"
  }

  it("refuses production without secrets", () => {
    expect(() => parseConfig({ CHECKOUT_ENV: "production" })).toThrow(/CHECKOUT_JWT_SECRET is required/)
    const config = parseConfig(PRODUCTION)
    expect(config.demo).toBe(false)
    expect(config.webhookAllowLoopback).toBe(false)
  })

  it("refuses a production start with the public demo, without a public URL, or silently on the embedded database; closes sign-up there", () => {
    const problems = (env: Record<string, string | undefined>) => {
      try {
        parseConfig(env)
        return []
      } catch (error) {
        return (error as ConfigError).problems
      }
    }
    expect(problems({ ...PRODUCTION, CHECKOUT_DEMO: "true" })).toEqual([
      "CHECKOUT_DEMO=true is refused when CHECKOUT_ENV=production: the demo merchant's password and wallets are public"
    ])
    expect(problems({ ...PRODUCTION, CHECKOUT_PUBLIC_URL: undefined })).toEqual([
      "CHECKOUT_PUBLIC_URL is required when CHECKOUT_ENV=production: it is the base of every paymentUrl"
    ])
    const plainHttp =
      "CHECKOUT_PUBLIC_URL must use https when CHECKOUT_ENV=production (http only for loopback hosts): over plain HTTP anyone on the path can swap the payer page's address"
    expect(problems({ ...PRODUCTION, CHECKOUT_PUBLIC_URL: "http://pay.example.com" })).toEqual([plainHttp])
    expect(problems({ ...PRODUCTION, CHECKOUT_PUBLIC_URL: "http://10.0.0.5:3000" })).toEqual([plainHttp])
    for (const loopback of ["http://localhost:3000", "http://127.0.0.1:3000", "http://[::1]:3000"]) {
      expect(problems({ ...PRODUCTION, CHECKOUT_PUBLIC_URL: loopback }), loopback).toEqual([])
    }
    for (const [url, what] of [
      [" https://pay.example.com", "surrounding spaces"],
      ["https://pay.example.com\t", "surrounding spaces"],
      ["https://user:secret@pay.example.com", "user information"],
      ["https://pay.example.com/?a=1#f", "a query, a fragment"],
      ["https://pay.example.com/#", "a fragment"],
      ["https://pay.example.com?", "a query"]
    ] as const) {
      expect(problems({ ...PRODUCTION, CHECKOUT_PUBLIC_URL: url }), url).toEqual([
        `CHECKOUT_PUBLIC_URL must be a plain base URL (scheme, host, optional port and path) that paymentUrl appends /pay/<id> to: it has ${what} (got "${url}")`
      ])
    }
    expect(problems({ ...PRODUCTION, CHECKOUT_PUBLIC_URL: "https://pay.example.com/shop/" })).toEqual([])
    expect(problems({ ...PRODUCTION, DATABASE_URL: undefined })).toEqual([
      "DATABASE_URL is required when CHECKOUT_ENV=production (a PostgreSQL server); to run on the embedded database instead, set CHECKOUT_DATA_DIR explicitly"
    ])
    expect(parseConfig({ ...PRODUCTION, DATABASE_URL: undefined, CHECKOUT_DATA_DIR: "/var/lib/checkout" }).dataDir).toBe("/var/lib/checkout")
    expect(parseConfig(PRODUCTION).signup).toBe("closed")
    expect(parseConfig({ ...PRODUCTION, CHECKOUT_SIGNUP: "open" }).signup).toBe("open")
    expect(parseConfig({}).signup).toBe("open")
  })

  it("reports every problem at once, each naming its variable, and never echoes a secret", () => {
    let thrown: unknown
    try {
      parseConfig({ PORT: "abc", CHECKOUT_CONFIRMATIONS_BASE: "-5", CHECKOUT_ROLE: "boss", CHECKOUT_JWT_SECRET: "short-secret-value" })
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(ConfigError)
    expect((thrown as ConfigError).problems).toEqual([
      "PORT must be an integer from 0 to 65535 (got \"abc\")",
      "CHECKOUT_ROLE must be one of api, workers, all (got \"boss\")",
      "CHECKOUT_JWT_SECRET must be at least 32 characters",
      "CHECKOUT_CONFIRMATIONS_BASE must be an integer from 1 to 10000 (got \"-5\")"
    ])
    expect((thrown as Error).message).not.toContain("short-secret-value")
  })

  it("checks the rails' settings at start: confirmations, token contracts and factories", () => {
    expect(() => parseConfig({ CHECKOUT_CONFIRMATIONS_BASE: "abc" })).toThrow(/^CHECKOUT_CONFIRMATIONS_BASE must be an integer from 1 to 10000 \(got "abc"\)$/)
    expect(parseConfig({ CHECKOUT_CONFIRMATIONS_BASE: "3" }).rails.confirmations).toEqual({ base: 3 })
    expect(() => parseConfig({ CHECKOUT_TOKEN_BASE_USDT: "not-an-address" })).toThrow(/CHECKOUT_TOKEN_BASE_USDT must be an EVM contract address/)
    expect(() => parseConfig({ CHECKOUT_TOKEN_SOLANA_USDC: "0x0000000000000000000000000000000000000001" })).toThrow(/CHECKOUT_TOKEN_SOLANA_USDC must be a Solana mint/)
    expect(() => parseConfig({ CHECKOUT_TOKEN_POLYGON_USDC: "0x0000000000000000000000000000000000000001" })).toThrow(/CHECKOUT_TOKEN_POLYGON_USDC is not a token setting/)
    expect(parseConfig({ CHECKOUT_TOKEN_BASE_USDT: "0x0000000000000000000000000000000000000001" }).rails.tokens).toEqual({
      "base:USDT": "0x0000000000000000000000000000000000000001"
    })
    expect(() => parseConfig({ CHECKOUT_FORWARDER_FACTORY_BASE: "0x12" })).toThrow(/CHECKOUT_FORWARDER_FACTORY_BASE must be an EVM address/)
  })

  it("reads the testnet watchers' endpoints as the live ones, with the same checks, in production too", () => {
    const env = {
      ...PRODUCTION,
      CHECKOUT_TEST_RPC_URL_ETHEREUM: "https://sepolia-a.example/key, https://sepolia-b.example/",
      CHECKOUT_TEST_ESPLORA_URL: "https://mempool.space/signet/api"
    }
    const { chains } = parseConfig(env)
    expect(chains.testEndpointLists).toEqual({
      ethereum: ["https://sepolia-a.example/key", "https://sepolia-b.example"],
      bitcoin: ["https://mempool.space/signet/api"]
    })
    expect(chains.endpoints).toEqual({})
    expect(() => parseConfig({ ...PRODUCTION, CHECKOUT_TEST_RPC_URL_BASE: "ftp://base-sepolia.example" }))
      .toThrow(/CHECKOUT_TEST_RPC_URL_BASE must be a comma-separated list of URLs starting with http: or https:/)
    expect(() => parseConfig({ CHECKOUT_TEST_ESPLORA_URL: "signet" })).toThrow(/CHECKOUT_TEST_ESPLORA_URL must be a comma-separated list of URLs/)
  })

  /** The first cells of a markdown table's rows, as variable names (`CHECKOUT_RPC_URL_<NETWORK>` names a family). */
  const tableVariables = (file: string) => {
    const text = readFileSync(new URL(`../../${file}`, import.meta.url), "utf8")
    return new Set([...text.matchAll(/^\| (.+?) \|/gm)].flatMap((row) => [...row[1].matchAll(/`([A-Z0-9_<>]+)`/g)].map((name) => name[1])))
  }

  it("documents every variable it reads in the configuration table (docs/configuration.md)", () => {
    const documented = tableVariables("docs/configuration.md")
    const missing = declaredVariables().map((variable) => variable.name).filter((name) => !documented.has(name))
    expect(missing, "variables without a row in docs/configuration.md").toEqual([])
  })

  it("names only variables it reads in the README's short configuration table", () => {
    const declared = new Set(declaredVariables().map((variable) => variable.name))
    expect([...tableVariables("README.md")].filter((name) => !declared.has(name))).toEqual([])
  })

  it.effect("never falls back to database-kept secrets in production", () =>
    Effect.gen(function*() {
      expect(() => parseConfig({ CHECKOUT_ENV: "production", CHECKOUT_ENCRYPTION_KEY: "k".repeat(40) }))
        .toThrow(/CHECKOUT_JWT_SECRET is required when CHECKOUT_ENV=production/)
      const production = { ...parseConfig({ CHECKOUT_ENV: "test" }), env: "production" as const, jwtSecret: undefined }
      let touched = false
      const database = Layer.succeed(SqlClient.SqlClient, new Proxy({}, { get: () => (touched = true) }) as SqlClient.SqlClient)
      const exit = yield* Effect.exit(Effect.scoped(Layer.build(
        Secrets.layer.pipe(Layer.provide([Layer.succeed(AppConfig, production), database]))
      )))
      expect(Exit.isFailure(exit) && Cause.pretty(exit.cause)).toMatch(/jwt_secret must come from configuration in production/)
      expect(touched).toBe(false)
    }))

  it("keeps secrets redacted in the configuration", () => {
    const config = parseConfig({ CHECKOUT_JWT_SECRET: "j".repeat(40), CHECKOUT_ENCRYPTION_KEY: "e".repeat(40) })
    expect(JSON.stringify(config)).not.toContain("jjjj")
    expect(String(config.encryptionKey)).toBe("<redacted>")
    expect(Redacted.value(config.jwtSecret!)).toBe("j".repeat(40))
  })
})
