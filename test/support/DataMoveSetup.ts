import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import pg from "pg"
import { privateDatabase } from "./PrivateDatabase.ts"
import { scriptEnv } from "./ScriptProcess.ts"

const run = promisify(execFile)

/**
 * What the data move suites share: an embedded database's directory of their own, private
 * PostgreSQL databases to move into (each dropped by `cleanUp`, with the directory), the project's
 * CLI run on that directory, and a query on a database by URL.
 */
export const dataMoveSetup = (prefix: string) => {
  const dataDir = mkdtempSync(join(tmpdir(), prefix))
  const databases: Array<Awaited<ReturnType<typeof privateDatabase>>> = []
  /** `npm run cli -- ...args` on the suite's data directory, in test mode, with `env` added. */
  const cli = (env: Readonly<Record<string, string>>, ...args: Array<string>) =>
    run(process.execPath, ["--experimental-strip-types", "--disable-warning=ExperimentalWarning", "scripts/cli.ts", ...args], {
      env: scriptEnv({ CHECKOUT_DATA_DIR: dataDir, CHECKOUT_ENV: "test", ...env })
    })
  /** A new private database on the suite's PostgreSQL server: its URL. */
  const newDatabase = async () => {
    const database = await privateDatabase()
    databases.push(database)
    return database.url!
  }
  const query = async (url: string, text: string) => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      return (await client.query(text)).rows
    } finally {
      await client.end()
    }
  }
  const cleanUp = async () => {
    for (const database of databases) await database.drop()
    rmSync(dataDir, { recursive: true, force: true })
  }
  return { dataDir, cli, newDatabase, query, cleanUp }
}
