import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"

const ROOT = join(import.meta.dirname, "..", "..")
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A service process a suite runs (`node src/main.ts`), its output kept as it prints. */
export interface ServiceInstance {
  process?: ChildProcess | undefined
  /** The last `keep` characters it printed (stdout and stderr). */
  output: string
}

export interface ServiceStart {
  /** Named in the error when it does not start. */
  readonly label: string
  readonly port: number
  /** PORT, HOST, CHECKOUT_ENV=test and CHECKOUT_PRICE_URL="" are set; these are added over them. */
  readonly env: Readonly<Record<string, string | undefined>>
  /** How much output to keep (characters). */
  readonly keep: number
  readonly startMs?: number | undefined
  /** Started once this holds; by default once GET /api/health answers. */
  readonly ready?: (() => boolean | Promise<boolean>) | undefined
}

/**
 * The service (`src/main.ts`, as `npm start` runs it) as a process of its own, with exactly `env`
 * (and PATH), stdout and stderr piped: the one place a suite spawns it.
 */
export const spawnService = (env: Readonly<Record<string, string | undefined>>): ChildProcess =>
  spawn(process.execPath, ["--experimental-strip-types", "--disable-warning=ExperimentalWarning", join(ROOT, "src", "main.ts")], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })

const healthAnswers = (port: number) => () => fetch(`http://127.0.0.1:${port}/api/health`, { signal: AbortSignal.timeout(500) }).then(() => true, () => false)

/**
 * Starts the service (`src/main.ts`, as `npm start` does) in a process of its own, keeping what it
 * prints on `instance`, and waits until it is ready (by default: its health endpoint answers);
 * throws with its last output when it exits first or does not start within `startMs` (60 s).
 */
export const startService = async (instance: ServiceInstance, start: ServiceStart): Promise<ChildProcess> => {
  const child = spawnService({ ...process.env, PORT: String(start.port), HOST: "127.0.0.1", CHECKOUT_ENV: "test", CHECKOUT_PRICE_URL: "", ...start.env })
  instance.process = child
  instance.output = ""
  const collect = (chunk: Buffer) => {
    instance.output = (instance.output + chunk.toString()).slice(-start.keep)
  }
  child.stdout!.on("data", collect)
  child.stderr!.on("data", collect)
  const ready = start.ready ?? healthAnswers(start.port)
  const deadline = Date.now() + (start.startMs ?? 60_000)
  while (!(await ready())) {
    if (child.exitCode !== null) throw new Error(`${start.label} exited while starting:\n${instance.output.slice(-3000)}`)
    if (Date.now() > deadline) throw new Error(`${start.label} did not start:\n${instance.output.slice(-3000)}`)
    await sleep(100)
  }
  return child
}

/** SIGKILL (kill -9) to a started service, resolved once it has exited; nothing when it is not running. */
export const killService = async (instance: ServiceInstance) => {
  const child = instance.process
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once("exit", resolve))
  child.kill("SIGKILL")
  await exited
}
