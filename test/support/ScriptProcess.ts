import { type ChildProcess, spawn } from "node:child_process"
import { createInterface } from "node:readline"

/** A project script run as its own process group (as `npm run …` would), read line by line. */
export interface ScriptProcess {
  readonly child: ChildProcess
  /** The first output line (stdout or stderr) that matches, including lines printed before the call. */
  readonly line: (pattern: RegExp) => Promise<string>
  /** Everything printed so far. */
  readonly output: () => string
  /** SIGTERM to the whole process group (the script and everything it started); resolves with the script's exit code once it has exited. */
  readonly stop: () => Promise<number | null>
}

/** Runs `node --experimental-strip-types <script> ...args` from the project directory. */
export const startScript = (script: string, args: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>>): ScriptProcess => {
  const child = spawn(process.execPath, ["--experimental-strip-types", "--disable-warning=ExperimentalWarning", script, ...args], {
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"]
  })
  const lines: Array<string> = []
  const waiters: Array<{ pattern: RegExp; resolve: (line: string) => void; reject: (error: Error) => void }> = []
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  const take = (line: string) => {
    lines.push(line)
    for (const waiter of waiters.filter((entry) => entry.pattern.test(line))) {
      waiters.splice(waiters.indexOf(waiter), 1)
      waiter.resolve(line)
    }
  }
  createInterface({ input: child.stdout! }).on("line", take)
  createInterface({ input: child.stderr! }).on("line", take)
  void exited.then((code) => {
    for (const waiter of waiters.splice(0)) waiter.reject(new Error(`${script} exited (${code}) before printing ${waiter.pattern}:\n${lines.join("\n")}`))
  })
  return {
    child,
    line: (pattern) => {
      const seen = lines.find((line) => pattern.test(line))
      if (seen !== undefined) return Promise.resolve(seen)
      if (child.exitCode !== null || child.signalCode !== null) return Promise.reject(new Error(`${script} has exited:\n${lines.join("\n")}`))
      return new Promise((resolve, reject) => waiters.push({ pattern, resolve, reject }))
    },
    output: () => lines.join("\n"),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid!, "SIGTERM")
        } catch {
          // the group is already gone
        }
      }
      return exited
    }
  }
}

/** The environment of a script started by a test: no shared PostgreSQL or Redis of the suites, development mode. */
export const scriptEnv = (extra: Readonly<Record<string, string>>): Record<string, string | undefined> => {
  const { DATABASE_URL: _database, REDIS_URL: _redis, CHECKOUT_ENV: _env, ...rest } = process.env
  return { ...rest, CHECKOUT_ENV: "development", ...extra }
}
