import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"

/** The instance secrets kept in the database (development only). SQL and decode failures are defects here. */
export class SecretsRepo extends Context.Service<SecretsRepo, {
  /** Stores `candidate` under `name` unless a secret is stored there already, and answers the stored one. */
  readonly storeOnce: (name: string, candidate: string) => Effect.Effect<string>
}>()("Accounts/SecretsRepo") {
  static readonly layer = Layer.effect(
    SecretsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const findSecret = SqlSchema.findOne({
        Request: Schema.Struct({ name: Schema.String }),
        Result: Schema.Struct({ value: Schema.String }),
        execute: ({ name }) => sql`SELECT value FROM instance_secrets WHERE name = ${name}`
      })
      return {
        storeOnce: (name, candidate) =>
          Effect.gen(function*() {
            yield* sql`INSERT INTO instance_secrets (name, value) VALUES (${name}, ${candidate}) ON CONFLICT (name) DO NOTHING`
            const { value } = yield* findSecret({ name })
            return value
          }).pipe(Effect.orDie)
      }
    })
  )
}
