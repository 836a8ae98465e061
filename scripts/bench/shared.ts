/**
 * Helpers shared by the bench scripts (`npm run bench`): child processes, free ports, readiness,
 * resident memory. No project code here, so the raw baseline can use it too.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import type { PacedRequest } from "./paced.ts"

export const ROOT = join(import.meta.dirname, "..", "..")
export const NODE_ARGS = ["--experimental-strip-types", "--disable-warning=ExperimentalWarning"]

/** What the setup step creates for one target (service or baseline) and hands to the load generator. */
export interface Seeded {
  readonly label: string
  readonly merchantId: string
  readonly apiKey: string
  /** Invoices (5 options, one payment each) that the read scenarios rotate over. */
  readonly invoiceIds: ReadonlyArray<string>
  /** The keys the create scenario rotates over: apiKey first, then those of the extra merchants (--merchants). */
  readonly apiKeys: ReadonlyArray<string>
}

export type Scenario = "create" | "detail" | "status" | "public status"

const CREATE_BODY = JSON.stringify({ amountUsd: 25.5 })

/** The requests of a scenario against a seeded target (`create` one, the reads one per invoice), with its first API key. */
export const requestsFor = (scenario: Scenario, seed: Seeded): Array<PacedRequest> => {
  const key = { "x-api-key": seed.apiKey }
  switch (scenario) {
    case "create":
      return [{ method: "POST", path: "/api/checkout/invoices", headers: { ...key, "content-type": "application/json" }, body: CREATE_BODY }]
    case "detail":
      return seed.invoiceIds.map((id) => ({ method: "GET", path: `/api/checkout/invoices/${id}`, headers: key }))
    case "status":
      return seed.invoiceIds.map((id) => ({ method: "GET", path: `/api/checkout/invoices/${id}/status`, headers: key }))
    case "public status":
      return seed.invoiceIds.map((id) => ({ method: "GET", path: `/api/checkout/pay/${id}/status`, headers: {} }))
  }
}

/** For an open-loop load: create rotates over every seeded merchant's key (one bitcoin pool each). */
export const pacedRequestsFor = (scenario: Scenario, seed: Seeded): Array<PacedRequest> =>
  scenario === "create"
    ? seed.apiKeys.map((key) => ({ ...requestsFor(scenario, seed)[0], headers: { "x-api-key": key, "content-type": "application/json" } }))
    : requestsFor(scenario, seed)

/** A port nobody listens on right now (the child binds it a moment later). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

export interface Child {
  readonly process: ChildProcess
  /** Resolves with the first stdout line that parses as a JSON object. */
  readonly firstJson: Promise<Record<string, unknown>>
  /** Resolves with the exit code once the child has exited. */
  readonly exited: Promise<number | null>
  /** The inspector's WebSocket URL when the child runs with --inspect (undefined otherwise, once it exits). */
  readonly inspector: Promise<string | undefined>
}

/** Runs a node script (type stripping on) as a child; stderr passes through with a prefix. */
export const startNode = (
  script: string,
  args: ReadonlyArray<string>,
  env: Readonly<Record<string, string | undefined>>,
  options: { readonly label: string; readonly nodeFlags?: ReadonlyArray<string> }
): Child => {
  const child = spawn(process.execPath, [...NODE_ARGS, ...(options.nodeFlags ?? []), script, ...args], {
    cwd: ROOT,
    env: env as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let settled = false
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  const firstJson = new Promise<Record<string, unknown>>((resolve, reject) => {
    let pending = ""
    child.stdout!.on("data", (chunk: Buffer) => {
      const text = chunk.toString()
      stdout = (stdout + text).slice(-20_000)
      pending += text
      const lines = pending.split("\n")
      pending = lines.pop() ?? ""
      for (const line of lines) {
        if (!settled && line.startsWith("{")) {
          try {
            resolve(JSON.parse(line) as Record<string, unknown>)
            settled = true
            continue
          } catch {
            // not the report line: show it below
          }
        }
        // Anything else a child prints (e.g. Effect's logger) is shown, prefixed.
        if (line.trim() !== "") process.stderr.write(`  [${options.label}] ${line}\n`)
      }
    })
    void exited.then((code) => {
      if (!settled) reject(new Error(`${options.label} exited with code ${code} before reporting; stdout: ${stdout.slice(-2000)}`))
    })
  })
  firstJson.catch(() => undefined) // only an error for callers that wait for it
  let inspectorUrl: string | undefined
  const inspector = new Promise<string | undefined>((resolve) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      const match = /Debugger listening on (ws:\/\/\S+)/.exec(chunk.toString())
      if (match !== null && inspectorUrl === undefined) {
        inspectorUrl = match[1]
        resolve(inspectorUrl)
      }
    })
    void exited.then(() => resolve(undefined))
  })
  child.stderr!.on("data", (chunk: Buffer) => {
    for (const line of chunk.toString().split("\n")) {
      if (line.trim() === "" || /Debugger (listening|ending|attached)|For help, see: https:\/\/nodejs.org|Waiting for the debugger to disconnect/.test(line)) continue
      process.stderr.write(`  [${options.label}] ${line}\n`)
    }
  })
  return { process: child, firstJson, exited, inspector }
}

/** Polls an HTTP URL until the server answers with anything but 503 (a starting service answers 503 until its routes attach). */
export const waitForHttp = async (url: string, child: Child, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs
  let exitCode: number | null | undefined
  void child.exited.then((code) => (exitCode = code ?? -1))
  while (Date.now() < deadline) {
    if (exitCode !== undefined) throw new Error(`the server exited with code ${exitCode} while starting`)
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1000) })
      await response.arrayBuffer()
      if (response.status !== 503) return
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`)
}

/** Stops a child with SIGTERM (so that --cpu-prof writes its profile), SIGKILL after a grace period. */
export const stop = async (child: Child, graceMs = 10_000) => {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return
  child.process.kill("SIGTERM")
  const timer = setTimeout(() => child.process.kill("SIGKILL"), graceMs)
  await child.exited
  clearTimeout(timer)
}

/** Resident set size of a process in MiB, from /proc/<pid>/status (VmRSS). */
export const rssMb = (pid: number): number => {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  return match === null ? Number.NaN : Math.round(Number(match[1]) / 1024)
}

/** A Chrome DevTools Protocol session on a child's inspector: one call at a time or several, each answered by id. */
export const openInspector = async (inspectorUrl: string, timeoutMs = 15_000) => {
  const socket = new WebSocket(inspectorUrl)
  await new Promise<void>((resolve, reject) => {
    const fail = (message: string) => {
      clearTimeout(timer)
      socket.close()
      reject(new Error(message))
    }
    const timer = setTimeout(() => fail("inspector did not answer"), timeoutMs)
    socket.addEventListener("open", () => {
      clearTimeout(timer)
      resolve()
    }, { once: true })
    socket.addEventListener("error", () => fail("inspector connection failed"), { once: true })
  })
  let nextId = 0
  const call = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<Record<string, any>>((resolve, reject) => {
      const id = ++nextId
      const onMessage = (event: MessageEvent) => {
        const message = JSON.parse(String(event.data)) as { id?: number; result?: Record<string, any>; error?: unknown }
        if (message.id !== id) return
        clearTimeout(timer)
        socket.removeEventListener("message", onMessage)
        if (message.error !== undefined) reject(new Error(`inspector: ${JSON.stringify(message.error)}`))
        else resolve(message.result ?? {})
      }
      const timer = setTimeout(() => {
        socket.removeEventListener("message", onMessage)
        reject(new Error(`inspector did not answer ${method}`))
      }, timeoutMs)
      socket.addEventListener("message", onMessage)
      socket.send(JSON.stringify({ id, method, params }))
    })
  return { call, close: () => socket.close() }
}

/**
 * Forces a full garbage collection in a child started with --inspect=127.0.0.1:0 and returns its
 * live JS heap in MiB (Runtime.getHeapUsage after HeapProfiler.collectGarbage): unlike RSS, it
 * does not include heap space V8 keeps reserved after a burst, so it shows a leak directly.
 */
export const heapAfterGcMb = async (inspectorUrl: string, timeoutMs = 15_000): Promise<number> => {
  const inspector = await openInspector(inspectorUrl, timeoutMs)
  try {
    await inspector.call("HeapProfiler.collectGarbage")
    const { usedSize } = await inspector.call("Runtime.getHeapUsage")
    if (typeof usedSize !== "number") throw new Error("inspector: no heap usage")
    return Math.round((usedSize / 2 ** 20) * 10) / 10
  } finally {
    inspector.close()
  }
}

/**
 * The environment of the service under test: the API role on a loopback port, no demo data, the
 * rate limiter active with its database store (REDIS_URL cleared) and out of the way, and the
 * fixed test price of BTC (CHECKOUT_PRICE_URL cleared).
 */
export const benchServiceEnv = (
  env: Readonly<Record<string, string | undefined>>,
  port: number,
  extra: Readonly<Record<string, string>> = {}
): Record<string, string | undefined> => ({
  ...env,
  PORT: String(port),
  HOST: "127.0.0.1",
  CHECKOUT_ENV: "test",
  CHECKOUT_DEMO: "false",
  CHECKOUT_ROLE: "api",
  CHECKOUT_API_RATE_LIMIT: "1000000",
  REDIS_URL: "",
  CHECKOUT_PRICE_URL: "",
  ...extra
})
