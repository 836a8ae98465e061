/**
 * Idle footprint and start time: the service started as `npm start` would (demo off, all roles),
 * timed from spawn to its first answered request, then its resident memory after 3 s idle; and,
 * for comparison, a bare Node process that only opens a PGlite database. Runs on the embedded
 * database (a fresh data directory, then the same one again: a warm start), and on the PostgreSQL
 * server when DATABASE_URL is set (in a new, empty database on that server, dropped afterwards).
 *
 *   [DATABASE_URL=...] node --experimental-strip-types scripts/bench/footprint.ts [--json]
 *
 * With --json it ends with one JSON line of the figures (what `npm run bench` reads).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import pg from "pg"
import { freePort, heapAfterGcMb, ROOT, rssMb, startNode, stop } from "./shared.ts"

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const startService = async (env: Record<string, string | undefined>) => {
  const port = await freePort()
  const started = performance.now()
  const child = startNode(join(ROOT, "src", "main.ts"), [], {
    ...process.env,
    ...env,
    PORT: String(port),
    HOST: "127.0.0.1",
    CHECKOUT_DEMO: "false",
    CHECKOUT_PRICE_URL: "",
    REDIS_URL: ""
  }, { label: "service", nodeFlags: ["--inspect=127.0.0.1:0"] })
  for (;;) {
    if (child.process.exitCode !== null) throw new Error("the service exited while starting")
    try {
      const response = await fetch(`http://127.0.0.1:${port}/api/health/ready`, { signal: AbortSignal.timeout(500) })
      if (response.status === 200) break
    } catch {
      // not listening yet
    }
    await sleep(20)
  }
  const readyMs = Math.round(performance.now() - started)
  await sleep(3_000)
  const mb = rssMb(child.process.pid!)
  const inspector = await child.inspector
  const heapMb = inspector === undefined ? Number.NaN : await heapAfterGcMb(inspector)
  const afterGcMb = rssMb(child.process.pid!)
  await stop(child)
  return { readyMs, mb, afterGcMb, heapMb }
}

/** PGlite with the service's settings (CHECKOUT_PGLITE_SHARED_BUFFERS's default), so that the difference is what the service adds. */
const barePglite = async (dataDir: string) => {
  const script = join(mkdtempSync(join(tmpdir(), "pglite-bare-")), "bare.ts")
  // Imported by file URL: the script lives outside the project, where bare specifiers do not resolve.
  const pglite = pathToFileURL(join(ROOT, "node_modules", "@electric-sql", "pglite", "dist", "index.js")).href
  writeFileSync(script, `import { PGlite } from ${JSON.stringify(pglite)}
const db = await PGlite.create(${JSON.stringify(dataDir)}, { postgresqlconf: ["shared_buffers=32MB"] })
await db.query("SELECT 1")
console.log(JSON.stringify({ ready: true }))
setInterval(() => undefined, 1 << 30)
`)
  const child = startNode(script, [], { ...process.env }, { label: "pglite" })
  await child.firstJson
  await sleep(3_000)
  const mb = rssMb(child.process.pid!)
  await stop(child)
  return mb
}

const rows: Array<string> = []
const figures: Record<string, unknown> = {}
const dataDir = mkdtempSync(join(tmpdir(), "footprint-"))
try {
  const cold = await startService({ DATABASE_URL: "", CHECKOUT_DATA_DIR: dataDir })
  rows.push(`embedded PGlite, first start:  ready in ${cold.readyMs} ms, idle RSS ${cold.mb} MB (${cold.afterGcMb} MB after a full GC, live JS heap ${cold.heapMb} MB)`)
  figures.embeddedFirst = cold
  const warm = await startService({ DATABASE_URL: "", CHECKOUT_DATA_DIR: dataDir })
  figures.embeddedWarm = warm
  rows.push(`embedded PGlite, warm start:   ready in ${warm.readyMs} ms, idle RSS ${warm.mb} MB (${warm.afterGcMb} MB after a full GC, live JS heap ${warm.heapMb} MB)`)
  const pgliteAlone = await barePglite(dataDir)
  figures.pgliteAloneMb = pgliteAlone
  rows.push(`bare Node + open PGlite:        idle RSS ${pgliteAlone} MB`)
  // The same on a fresh data directory: PGlite's initdb grows its WebAssembly memory, which never shrinks.
  const freshDir = mkdtempSync(join(tmpdir(), "footprint-fresh-"))
  try {
    figures.pgliteAloneFirstStartMb = await barePglite(freshDir)
    rows.push(`bare Node + PGlite, first start: idle RSS ${figures.pgliteAloneFirstStartMb} MB`)
  } finally {
    rmSync(freshDir, { recursive: true, force: true })
  }
  if (process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== "") {
    // A database of its own, empty: on the bench's database (10^5 invoices, webhooks to receivers
    // that are gone) the service starts working at once, sweeping and retrying, and is not idle.
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL })
    await admin.connect()
    const name = `checkout_footprint_${process.pid}`
    await admin.query(`CREATE DATABASE ${name}`)
    try {
      const url = new URL(process.env.DATABASE_URL)
      url.pathname = `/${name}`
      const server = await startService({ DATABASE_URL: url.href, CHECKOUT_DATA_DIR: dataDir })
      figures.server = server
      rows.push(
        `PostgreSQL server (empty database): ready in ${server.readyMs} ms, idle RSS ${server.mb} MB (${server.afterGcMb} MB after a full GC, live JS heap ${server.heapMb} MB)`
      )
    } finally {
      await admin.query(`DROP DATABASE ${name} WITH (FORCE)`)
      await admin.end()
    }
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true })
}
console.log(rows.join("\n"))
if (process.argv.includes("--json")) console.log(JSON.stringify(figures))
process.exit(0)
