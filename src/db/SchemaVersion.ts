import { Data, Effect } from "effect"
import type { Migrator, SqlClient } from "effect/sql"

/** A migration as the migrations table records it. */
export interface SchemaVersion {
  readonly id: number
  readonly name: string
}

/** The database was migrated by a newer version of the service than this one. */
export class DatabaseTooNew extends Data.TaggedError("DatabaseTooNew")<{ readonly applied: SchemaVersion; readonly known: SchemaVersion }> {
  override get message() {
    return `the database was migrated by a newer version of the service (migration ${describeVersion(this.applied)}; this version knows up to ${
      describeVersion(this.known)
    }): run that version or newer, or restore a backup made for this one`
  }
}

export const describeVersion = (version: SchemaVersion | undefined): string => version === undefined ? "none" : `${String(version.id).padStart(4, "0")}_${version.name}`

/** The newest migration of a loader: the one this code carries (Database.ts' `migrations`). */
export const knownVersion = (migrations: Migrator.Loader): Effect.Effect<SchemaVersion> =>
  Effect.map(Effect.orDie(migrations), (loaded) => {
    const [id, name] = loaded.reduce((newest, migration) => (migration[0] > newest[0] ? migration : newest))
    return { id, name }
  })

/** The newest migration applied to the database, or undefined when none ever was (no migrations table). */
export const appliedVersion = (sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    const [table] = yield* sql.unsafe<{ readonly present: string | null }>(`SELECT to_regclass('public.effect_sql_migrations')::text AS present`).withoutTransform
    if (table?.present === null || table?.present === undefined) return undefined
    const [latest] = yield* sql.unsafe<{ readonly id: number; readonly name: string }>(
      `SELECT migration_id AS id, name FROM effect_sql_migrations ORDER BY migration_id DESC LIMIT 1`
    ).withoutTransform
    return latest === undefined ? undefined : { id: Number(latest.id), name: latest.name }
  })

/** Fails when the database carries a migration newer than any this code knows: its schema is not this version's. */
export const refuseNewerSchema = (sql: SqlClient.SqlClient, migrations: Migrator.Loader) =>
  Effect.gen(function*() {
    const applied = yield* appliedVersion(sql)
    const known = yield* knownVersion(migrations)
    if (applied !== undefined && applied.id > known.id) return yield* new DatabaseTooNew({ applied, known })
  })
