import { Context, Effect, Layer, type Option, Schema, Struct } from "effect"
import { SqlClient, type SqlError, SqlSchema } from "effect/sql"
import { DateColumn, NullableDateColumn } from "../db/Columns.ts"
import { MerchantRow } from "./Merchant.ts"
import type { MerchantId } from "../domain/Ids.ts"

/** What verifying a token reads of its session and account, in one statement. */
const SessionStateRow = Schema.Struct({
  revokedAt: NullableDateColumn,
  expiresAt: DateColumn,
  ...MerchantRow.mapFields(Struct.pick(["status", "billingStatus"])).fields
})
export type SessionState = typeof SessionStateRow.Type

export interface NewSession {
  readonly id: string
  readonly merchantId: MerchantId
  readonly createdAt: Date
  readonly expiresAt: Date
}

/**
 * Persistence of dashboard sessions. SQL and decode failures are defects here, except in `findState`,
 * whose caller tells an unreachable database apart (it keeps its SqlError).
 */
export class SessionsRepo extends Context.Service<SessionsRepo, {
  readonly insert: (session: NewSession) => Effect.Effect<void>
  /** The session of this merchant and its account's status; SqlError stays: a connection failure means "the status cannot be verified". */
  readonly findState: (sessionId: string, merchantId: MerchantId) => Effect.Effect<Option.Option<SessionState>, SqlError.SqlError>
  readonly revoke: (sessionId: string) => Effect.Effect<void>
  /** Revokes every unrevoked session of the merchant. */
  readonly revokeAll: (merchantId: MerchantId) => Effect.Effect<void>
}>()("Accounts/SessionsRepo") {
  static readonly layer = Layer.effect(
    SessionsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const findSessionState = SqlSchema.findOneOption({
        Request: Schema.Struct({ sessionId: Schema.String, merchantId: Schema.String }),
        Result: SessionStateRow,
        execute: ({ sessionId, merchantId }) =>
          sql`SELECT s.revoked_at, s.expires_at, m.status, m.billing_status
            FROM sessions s JOIN merchants m ON m.id = s.merchant_id
            WHERE s.id = ${sessionId} AND s.merchant_id = ${merchantId}`
      })
      return {
        insert: ({ id, merchantId, createdAt, expiresAt }) => Effect.orDie(sql`INSERT INTO sessions ${sql.insert({ id, merchantId, createdAt, expiresAt })}`),
        findState: (sessionId, merchantId) => findSessionState({ sessionId, merchantId }).pipe(Effect.catchTag("SchemaError", Effect.die)),
        revoke: (sessionId) => Effect.orDie(sql`UPDATE sessions SET revoked_at = now() WHERE id = ${sessionId} AND revoked_at IS NULL`),
        revokeAll: (merchantId) => Effect.orDie(sql`UPDATE sessions SET revoked_at = now() WHERE merchant_id = ${merchantId} AND revoked_at IS NULL`)
      }
    })
  )
}
