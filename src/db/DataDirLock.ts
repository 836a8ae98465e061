import { Data, Effect } from "effect"
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"

/**
 * PGlite keeps no lock of its own on its directory (its postmaster.pid names no process and
 * survives a crash), and two processes on one directory corrupt it. The process that opens the
 * embedded database writes its pid to this file and removes it on close; a file whose process is
 * gone is stale (a crash) and does not hold the directory.
 */
const LOCK_FILE = "checkout-service.pid"

export class DataDirInUse extends Data.TaggedError("DataDirInUse")<{ readonly dataDir: string; readonly pid: number }> {
  override get message() {
    return `the embedded database in ${this.dataDir} is in use by process ${this.pid} (a running service?): stop it first`
  }
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** The live process, other than this one, that holds the directory; undefined when none does. */
export const dataDirHolder = (dataDir: string): number | undefined => {
  let pid: number
  try {
    pid = Number.parseInt(readFileSync(join(dataDir, LOCK_FILE), "utf8").trim(), 10)
  } catch {
    return undefined
  }
  return Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid) ? pid : undefined
}

/** Holds the directory for this process until the scope closes; fails when another live process holds it. */
export const holdDataDir = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.suspend(() => {
      const holder = dataDirHolder(dataDir)
      if (holder !== undefined) return Effect.fail(new DataDirInUse({ dataDir, pid: holder }))
      return Effect.sync(() => writeFileSync(join(dataDir, LOCK_FILE), `${process.pid}\n`))
    }),
    () => Effect.sync(() => rmSync(join(dataDir, LOCK_FILE), { force: true }))
  )
