import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"

/**
 * The embedded database's "in use" mark: the service writes its process id into the data directory
 * while it holds it, and removes it when it stops. PGlite's own postmaster.pid cannot tell (its pid
 * is always -42), and a backup or restore of a directory another process is writing is unusable.
 */
export const SERVICE_LOCK_FILE = "checkout-service.pid"

export const markInUse = (dataDir: string) => writeFileSync(join(dataDir, SERVICE_LOCK_FILE), String(process.pid))

/** Removed only when it is still this process's mark. */
export const releaseInUse = (dataDir: string) => {
  if (holderOf(dataDir) === process.pid) rmSync(join(dataDir, SERVICE_LOCK_FILE), { force: true })
}

/** The live process holding the directory, or undefined (none, or a mark left by a process that died). */
export const holderOf = (dataDir: string): number | undefined => {
  const file = join(dataDir, SERVICE_LOCK_FILE)
  if (!existsSync(file)) return undefined
  const pid = Number(readFileSync(file, "utf8").trim())
  if (!Number.isInteger(pid) || pid <= 0) return undefined
  try {
    process.kill(pid, 0)
    return pid
  } catch (error) {
    // EPERM: alive, owned by another user.
    return (error as NodeJS.ErrnoException).code === "EPERM" ? pid : undefined
  }
}
