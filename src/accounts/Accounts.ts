import { Context, Data, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../config/AppConfig.ts"
import { toDate } from "../db/Values.ts"
import { constantTimeEqual, generateApiKey, hashApiKey, keyPrefixOf, looksLikeApiKey } from "./ApiKeyFormat.ts"
import { makePasswordHasher } from "./Passwords.ts"

export class InvalidApiKey extends Data.TaggedError("InvalidApiKey")<{}> {}
export class AccountDisabled extends Data.TaggedError("AccountDisabled")<{}> {}
export class AccountStatusUnavailable extends Data.TaggedError("AccountStatusUnavailable")<{}> {}
export class EmailTaken extends Data.TaggedError("EmailTaken")<{}> {}
export class InvalidCredentials extends Data.TaggedError("InvalidCredentials")<{}> {}
export class TooManyApiKeys extends Data.TaggedError("TooManyApiKeys")<{}> {}
export class ApiKeyNotFound extends Data.TaggedError("ApiKeyNotFound")<{}> {}

export const MAX_ACTIVE_API_KEYS = 3

export interface AuthenticatedMerchant {
  readonly merchantId: string
  readonly billingStatus: "active" | "blocked"
}

export interface User {
  readonly id: string
  readonly email: string
  readonly createdAt: Date
}

export interface ApiKeySummary {
  readonly id: string
  readonly keyPrefix: string
  readonly label: string
  readonly createdAt: Date
}

export interface CreatedApiKey extends ApiKeySummary {
  readonly rawKey: string
}

type Row = Record<string, unknown>

const userOf = (row: Row): User => ({ id: String(row.id), email: String(row.email), createdAt: toDate(row.createdAt) })
const keyOf = (row: Row): ApiKeySummary => ({
  id: String(row.id),
  keyPrefix: String(row.keyPrefix),
  label: String(row.label),
  createdAt: toDate(row.createdAt)
})

/** Merchant accounts, their passwords and API keys (only SHA-256 hashes of keys are stored). */
export class Accounts extends Context.Service<Accounts, {
  readonly authenticateApiKey: (rawKey: string) => Effect.Effect<AuthenticatedMerchant, InvalidApiKey | AccountDisabled | AccountStatusUnavailable>
  readonly createMerchant: (input: { readonly email: string; readonly isDemo?: boolean; readonly password?: string }) => Effect.Effect<string>
  readonly signUp: (email: string, password: string) => Effect.Effect<User, EmailTaken>
  readonly logIn: (email: string, password: string) => Effect.Effect<User, InvalidCredentials | AccountDisabled>
  readonly findUser: (merchantId: string) => Effect.Effect<User | undefined>
  readonly findMerchantByEmail: (email: string) => Effect.Effect<{ readonly id: string; readonly status: string } | undefined>
  readonly createApiKey: (merchantId: string, label: string) => Effect.Effect<CreatedApiKey, TooManyApiKeys>
  readonly listApiKeys: (merchantId: string) => Effect.Effect<ReadonlyArray<ApiKeySummary>>
  readonly revokeApiKey: (merchantId: string, keyId: string) => Effect.Effect<void, ApiKeyNotFound>
  readonly setStatus: (merchantId: string, status: "active" | "disabled") => Effect.Effect<void>
  readonly setBillingStatus: (merchantId: string, status: "active" | "blocked") => Effect.Effect<void>
  /** Records a cross-account probe; at the configured threshold the account is disabled. Returns whether it was. */
  readonly recordProbe: (merchantId: string, kind: string, detail: string) => Effect.Effect<boolean>
}>()("Accounts/Accounts") {
  static readonly layer = Layer.effect(
    Accounts,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const config = yield* AppConfig
      const passwords = yield* makePasswordHasher(config.passwords)

      const setStatus = (merchantId: string, status: "active" | "disabled") =>
        Effect.gen(function*() {
          yield* sql`UPDATE merchants SET status = ${status} WHERE id = ${merchantId}`
          if (status === "disabled") {
            yield* sql`UPDATE sessions SET revoked_at = now() WHERE merchant_id = ${merchantId} AND revoked_at IS NULL`
          }
        }).pipe(sql.withTransaction, Effect.orDie)

      const createMerchant = ({ email, isDemo = false, password }: { readonly email: string; readonly isDemo?: boolean; readonly password?: string }) =>
        Effect.gen(function*() {
          const id = crypto.randomUUID()
          const passwordHash = password === undefined ? null : yield* passwords.hash(password)
          yield* sql`INSERT INTO merchants ${sql.insert({ id, email: email.toLowerCase(), is_demo: isDemo, password_hash: passwordHash })}`
          return id
        })

      return {
        authenticateApiKey: (rawKey) =>
          Effect.gen(function*() {
            if (!looksLikeApiKey(rawKey)) return yield* new InvalidApiKey()
            const hash = hashApiKey(rawKey)
            const rows = yield* sql<Row>`SELECT k.key_hash, m.id AS merchant_id, m.status, m.billing_status
              FROM api_keys k JOIN merchants m ON m.id = k.merchant_id
              WHERE k.key_hash = ${hash} AND k.revoked_at IS NULL`.pipe(
              Effect.catchTag("SqlError", () => Effect.fail(new AccountStatusUnavailable()))
            )
            const row = rows[0]
            if (row === undefined || !constantTimeEqual(String(row.keyHash), hash)) return yield* new InvalidApiKey()
            if (row.status !== "active") return yield* new AccountDisabled()
            return {
              merchantId: String(row.merchantId),
              billingStatus: row.billingStatus === "blocked" ? "blocked" as const : "active" as const
            }
          }),
        createMerchant: (input) => createMerchant(input).pipe(Effect.orDie),
        signUp: (email, password) =>
          Effect.gen(function*() {
            const existing = yield* sql<Row>`SELECT id FROM merchants WHERE email = ${email.toLowerCase()}`
            if (existing.length > 0) return yield* new EmailTaken()
            const id = yield* createMerchant({ email, password }).pipe(
              Effect.catchTag("SqlError", (error) =>
                String((error as { reason?: { cause?: { code?: string } } }).reason?.cause?.code) === "23505"
                  ? Effect.fail(new EmailTaken())
                  : Effect.die(error))
            )
            const rows = yield* sql<Row>`SELECT id, email, created_at FROM merchants WHERE id = ${id}`
            return userOf(rows[0])
          }).pipe(Effect.catchTag("SqlError", Effect.die)),
        logIn: (email, password) =>
          Effect.gen(function*() {
            const rows = yield* sql<Row>`SELECT id, email, created_at, status, password_hash FROM merchants WHERE email = ${email.toLowerCase()}`
            const row = rows[0]
            const stored = row?.passwordHash === null || row?.passwordHash === undefined ? undefined : String(row.passwordHash)
            const valid = yield* passwords.verify(password, stored)
            if (row === undefined || stored === undefined || !valid) return yield* new InvalidCredentials()
            if (row.status !== "active") return yield* new AccountDisabled()
            if (passwords.needsRehash(stored)) {
              const rehashed = yield* passwords.hash(password)
              yield* sql`UPDATE merchants SET password_hash = ${rehashed} WHERE id = ${String(row.id)} AND password_hash = ${stored}`
            }
            return userOf(row)
          }).pipe(Effect.catchTag("SqlError", Effect.die)),
        findUser: (merchantId) =>
          sql<Row>`SELECT id, email, created_at FROM merchants WHERE id = ${merchantId}`.pipe(
            Effect.map((rows) => (rows[0] === undefined ? undefined : userOf(rows[0]))),
            Effect.orDie
          ),
        findMerchantByEmail: (email) =>
          sql<Row>`SELECT id, status FROM merchants WHERE email = ${email.toLowerCase()}`.pipe(
            Effect.map((rows) => (rows[0] === undefined ? undefined : { id: String(rows[0].id), status: String(rows[0].status) })),
            Effect.orDie
          ),
        createApiKey: (merchantId, label) =>
          Effect.gen(function*() {
            // Lock the merchant row so that concurrent creations cannot pass the limit together.
            yield* sql`SELECT id FROM merchants WHERE id = ${merchantId} FOR UPDATE`
            const active = yield* sql<Row>`SELECT count(*)::int AS count FROM api_keys WHERE merchant_id = ${merchantId} AND revoked_at IS NULL`
            if (Number(active[0].count) >= MAX_ACTIVE_API_KEYS) return yield* new TooManyApiKeys()
            const rawKey = generateApiKey()
            const id = crypto.randomUUID()
            const rows = yield* sql<Row>`INSERT INTO api_keys ${
              sql.insert({ id, merchant_id: merchantId, key_hash: hashApiKey(rawKey), key_prefix: keyPrefixOf(rawKey), label })
            } RETURNING created_at`
            return { id, rawKey, keyPrefix: keyPrefixOf(rawKey), label, createdAt: toDate(rows[0].createdAt) }
          }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die)),
        listApiKeys: (merchantId) =>
          sql<Row>`SELECT id, key_prefix, label, created_at FROM api_keys WHERE merchant_id = ${merchantId} AND revoked_at IS NULL
            ORDER BY created_at, id`.pipe(Effect.map((rows) => rows.map(keyOf)), Effect.orDie),
        revokeApiKey: (merchantId, keyId) =>
          Effect.gen(function*() {
            const rows = yield* sql<Row>`UPDATE api_keys SET revoked_at = now()
              WHERE id = ${keyId} AND merchant_id = ${merchantId} AND revoked_at IS NULL RETURNING id`
            if (rows.length === 0) return yield* new ApiKeyNotFound()
          }).pipe(Effect.catchTag("SqlError", Effect.die)),
        setStatus,
        setBillingStatus: (merchantId, status) =>
          sql`UPDATE merchants SET billing_status = ${status} WHERE id = ${merchantId}`.pipe(Effect.asVoid, Effect.orDie),
        recordProbe: (merchantId, kind, detail) =>
          Effect.gen(function*() {
            yield* sql`INSERT INTO access_probes ${sql.insert({ merchant_id: merchantId, kind, detail: detail.slice(0, 500) })}`
            const rows = yield* sql<Row>`SELECT count(*)::int AS count FROM access_probes
              WHERE merchant_id = ${merchantId} AND created_at > now() - interval '1 day'`
            const reached = Number(rows[0].count) >= config.probeThreshold
            yield* Effect.logWarning("Cross-account probe").pipe(Effect.annotateLogs({ merchantId, kind, reached }))
            if (reached) yield* setStatus(merchantId, "disabled")
            return reached
          }).pipe(Effect.orDie)
      }
    })
  )
}
