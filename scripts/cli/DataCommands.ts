/**
 * `npm run cli -- data …`: the embedded database's backup and restore (issue #56), and raising a
 * key's derivation counter when the service refuses to start on it.
 *
 *   data backup --to <file> [--force]        (service stopped; a gzipped tarball of CHECKOUT_DATA_DIR)
 *   data restore --from <file> [--force]     (service stopped; into an empty CHECKOUT_DATA_DIR, or --force moves the old one aside)
 *   data start-index <xpub> <index>          (either database: the next address of the key is derived at least at <index>)
 */
import { PGlite } from "@electric-sql/pglite"
import { Effect, Layer } from "effect"
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { resolve } from "node:path"
import { AppConfig, type AppConfigShape, parseConfig } from "../../src/config/AppConfig.ts"
import { DatabaseLive } from "../../src/db/Database.ts"
import { dataDirHolder } from "../../src/db/DataDirLock.ts"
import { DerivationLedger } from "../../src/payments/DerivationLedger.ts"

export const DATA_ACTIONS = ["backup", "restore", "start-index"] as const
const usage = "usage: npm run cli -- data backup --to <file> [--force] | data restore --from <file> [--force] | data start-index <xpub> <index>"

class Refused extends Error {}

const option = (args: ReadonlyArray<string>, name: string) => {
  const at = args.indexOf(name)
  return at === -1 ? undefined : args[at + 1]
}

/** The embedded data directory, refused when the service (or another command) is using it, or when DATABASE_URL is the database. */
const stoppedDataDir = (config: AppConfigShape) => {
  if (config.databaseUrl !== undefined) throw new Refused("DATABASE_URL is set: back up and restore PostgreSQL with pg_dump and pg_restore (README, Backups and restores)")
  if (config.dataDir.startsWith("memory://")) throw new Refused("CHECKOUT_DATA_DIR is in memory: there is nothing to back up or restore")
  const holder = dataDirHolder(config.dataDir)
  if (holder !== undefined) throw new Refused(`the service (process ${holder}) is using ${config.dataDir}: stop it first`)
  return config.dataDir
}

const backup = async (config: AppConfigShape, args: ReadonlyArray<string>) => {
  const to = option(args, "--to")
  if (to === undefined) throw new Refused(usage)
  const dataDir = stoppedDataDir(config)
  if (!existsSync(resolve(dataDir, "PG_VERSION"))) throw new Refused(`${dataDir} holds no database`)
  if (existsSync(to) && !args.includes("--force")) throw new Refused(`${to} exists: choose another file, or add --force to replace it`)
  const db = await PGlite.create(dataDir)
  try {
    const dump = await db.dumpDataDir("gzip")
    writeFileSync(to, Buffer.from(await dump.arrayBuffer()))
    return `backup of ${dataDir} written to ${to} (${dump.size} bytes)`
  } finally {
    await db.close()
  }
}

const restore = async (config: AppConfigShape, args: ReadonlyArray<string>) => {
  const from = option(args, "--from")
  if (from === undefined) throw new Refused(usage)
  const dataDir = stoppedDataDir(config)
  if (!existsSync(from)) throw new Refused(`no backup at ${from}`)
  let movedAside = ""
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0) {
    if (!args.includes("--force")) throw new Refused(`${dataDir} is not empty: restore into an empty CHECKOUT_DATA_DIR, or add --force to move it aside first`)
    const aside = `${dataDir.replace(/\/+$/, "")}.before-restore-${new Date().toISOString().replace(/[:.]/g, "-")}`
    renameSync(dataDir, aside)
    movedAside = ` (the previous directory is now ${aside})`
  }
  const db = await PGlite.create(dataDir, { loadDataDir: new Blob([readFileSync(from)]) })
  try {
    const { rows } = await db.query<{ invoices: number }>("SELECT count(*)::int AS invoices FROM invoices")
    const counters = await db.query<{ xpub: string; next_index: number }>("SELECT xpub, next_index::int AS next_index FROM derivation_counters ORDER BY xpub")
    return [
      `restored ${from} into ${dataDir}: ${rows[0]?.invoices ?? 0} invoices${movedAside}; start the service: the watchers scan again from the restored cursors`,
      // Invoices created after the backup are gone, but their deposit addresses were handed out (docs/backups.md).
      ...counters.rows.map(({ next_index, xpub }) =>
        `${xpub}: next deposit index ${next_index}; if invoices were created after this backup, raise it past them first: npm run cli -- data start-index ${xpub} <index>`
      )
    ].join("\n")
  } finally {
    await db.close()
  }
}

const startIndex = (config: AppConfigShape, args: ReadonlyArray<string>) => {
  const [xpub, index] = args
  if (xpub === undefined || index === undefined || !/^\d{1,10}$/.test(index) || Number(index) > 2_147_483_647) throw new Refused(usage)
  const program = Effect.gen(function*() {
    const ledger = yield* DerivationLedger
    yield* ledger.raiseStart(xpub, Number(index))
    const next = (yield* ledger.nextIndexes([xpub])).get(xpub)
    return `the next deposit address of ${xpub} is derived at index ${next}`
  })
  const layer = DerivationLedger.layer.pipe(Layer.provideMerge(DatabaseLive), Layer.provide(Layer.succeed(AppConfig, config)))
  return Effect.runPromise(program.pipe(Effect.provide(layer)))
}

/** Runs `data <action> …` and exits: 0 with one line on stdout, 1 with the reason on stderr. */
export const runDataCommand = async (action: string | undefined, args: ReadonlyArray<string>): Promise<never> => {
  try {
    const config = parseConfig(process.env)
    const run = action === "backup" ? backup : action === "restore" ? restore : action === "start-index" ? startIndex : undefined
    if (run === undefined) throw new Refused(usage)
    console.log(await run(config, args))
    process.exit(0)
  } catch (error) {
    console.error(error instanceof Refused ? error.message : String(error))
    process.exit(1)
  }
}
