import pg from "pg"

/**
 * A database of its own on the DATABASE_URL server (undefined without one: the suite then
 * gets an embedded PGlite of its own anyway). Dispatchers take every due delivery in their
 * database, and chain watchers keep one cursor per network in theirs, so suites that move a
 * dispatcher's clock or run a watcher must not share one.
 */
export const privateDatabase = async () => {
  const url = process.env.DATABASE_URL
  if (url === undefined || url === "") return { url: undefined, drop: async () => {} }
  const name = `checkout_suite_${crypto.randomUUID().replaceAll("-", "")}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const own = new URL(url)
  own.pathname = `/${name}`
  return {
    url: own.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await client.end()
    }
  }
}
