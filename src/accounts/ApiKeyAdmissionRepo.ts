import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { KeyOwner, selectKeyOwner } from "./AccountsRepo.ts"
import { type WindowCharge, windowConflictUpdate, WindowRow } from "./PgRateLimiterStore.ts"

/** The key's owner and, when the account is active, its API window after this request. */
const AdmissionRow = Schema.Struct({
  ...KeyOwner.fields,
  count: Schema.NullOr(WindowRow.fields.count),
  expiresAtMs: Schema.NullOr(WindowRow.fields.expiresAtMs),
  lastExceeded: Schema.NullOr(WindowRow.fields.lastExceeded)
})
export type Admission = typeof AdmissionRow.Type

const decodeAdmission = Schema.decodeUnknownEffect(Schema.Array(AdmissionRow))

/**
 * The API-key admission's one statement on the database store. A decode failure is a defect; the
 * SqlError stays in the error channel: a connection failure means "the status cannot be verified".
 */
export class ApiKeyAdmissionRepo extends Context.Service<ApiKeyAdmissionRepo, {
  /**
   * Looks the key up and, when its account is active, charges the request to the window
   * `prefix of the key's mode || merchant_id`, in one statement; undefined for an unknown or revoked key.
   */
  readonly lookUpAndCharge: (keyHash: string, windowKeyPrefixes: { readonly live: string; readonly test: string },
    charge: WindowCharge) => Effect.Effect<Admission | undefined, SqlError.SqlError>
}>()("Accounts/ApiKeyAdmissionRepo") {
  static readonly layer = Layer.effect(
    ApiKeyAdmissionRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return {
        lookUpAndCharge: Effect.fnUntraced(function*(keyHash, windowKeyPrefixes, charge) {
          // The data-modifying CTE counts only what the lookup found: an unknown or revoked key, or a
          // disabled account, counts nothing.
          const rows = yield* sql`WITH owner AS (${selectKeyOwner(sql, keyHash)}), counted AS (
              INSERT INTO rate_limits AS r (key, count, expires_at_ms, last_exceeded)
              SELECT (CASE owner.mode WHEN 'test' THEN ${windowKeyPrefixes.test}::text ELSE ${windowKeyPrefixes.live}::text END) || owner.merchant_id::text, ${charge.tokens}::double precision,
                ${charge.now + charge.extension}::bigint, false
              FROM owner WHERE owner.status = 'active'
              ${windowConflictUpdate(sql, charge)}
            )
            SELECT owner.key_hash, owner.merchant_id, owner.mode, owner.status, owner.billing_status,
              counted.count, counted.expires_at_ms, counted.last_exceeded
            FROM owner LEFT JOIN counted ON true`
          const [row] = yield* decodeAdmission(rows).pipe(Effect.orDie)
          return row
        })
      }
    })
  )
}
