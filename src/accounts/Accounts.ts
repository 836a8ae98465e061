import { Context, Data, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { toDate } from "../db/Values.ts"
import { constantTimeEqual, generateApiKey, hashApiKey, keyPrefixOf, looksLikeApiKey } from "./ApiKeyFormat.ts"

export class InvalidApiKey extends Data.TaggedError("InvalidApiKey")<{}> {}
export class AccountDisabled extends Data.TaggedError("AccountDisabled")<{}> {}
export class AccountStatusUnavailable extends Data.TaggedError("AccountStatusUnavailable")<{}> {}

export interface AuthenticatedMerchant {
  readonly merchantId: string
  readonly billingStatus: "active" | "blocked"
}

export interface CreatedApiKey {
  readonly id: string
  readonly rawKey: string
  readonly keyPrefix: string
  readonly label: string
  readonly createdAt: Date
}

type Row = Record<string, unknown>

/** Merchant accounts and their API keys (only SHA-256 hashes of keys are stored). */
export class Accounts extends Context.Service<Accounts, {
  readonly authenticateApiKey: (rawKey: string) => Effect.Effect<AuthenticatedMerchant, InvalidApiKey | AccountDisabled | AccountStatusUnavailable>
  readonly createMerchant: (input: { readonly email: string; readonly isDemo?: boolean }) => Effect.Effect<string>
  readonly findMerchantByEmail: (email: string) => Effect.Effect<{ readonly id: string; readonly status: string } | undefined>
  readonly createApiKey: (merchantId: string, label: string) => Effect.Effect<CreatedApiKey>
  readonly setStatus: (merchantId: string, status: "active" | "disabled") => Effect.Effect<void>
  readonly setBillingStatus: (merchantId: string, status: "active" | "blocked") => Effect.Effect<void>
}>()("Accounts/Accounts") {
  static readonly layer = Layer.effect(
    Accounts,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
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
        createMerchant: ({ email, isDemo = false }) =>
          Effect.gen(function*() {
            const id = crypto.randomUUID()
            yield* sql`INSERT INTO merchants ${sql.insert({ id, email: email.toLowerCase(), is_demo: isDemo })}`
            return id
          }).pipe(Effect.orDie),
        findMerchantByEmail: (email) =>
          sql<Row>`SELECT id, status FROM merchants WHERE email = ${email.toLowerCase()}`.pipe(
            Effect.map((rows) => (rows[0] === undefined ? undefined : { id: String(rows[0].id), status: String(rows[0].status) })),
            Effect.orDie
          ),
        createApiKey: (merchantId, label) =>
          Effect.gen(function*() {
            const rawKey = generateApiKey()
            const id = crypto.randomUUID()
            const rows = yield* sql<Row>`INSERT INTO api_keys ${
              sql.insert({ id, merchant_id: merchantId, key_hash: hashApiKey(rawKey), key_prefix: keyPrefixOf(rawKey), label })
            } RETURNING created_at`
            return { id, rawKey, keyPrefix: keyPrefixOf(rawKey), label, createdAt: toDate(rows[0].createdAt) }
          }).pipe(Effect.orDie),
        setStatus: (merchantId, status) =>
          sql`UPDATE merchants SET status = ${status} WHERE id = ${merchantId}`.pipe(Effect.asVoid, Effect.orDie),
        setBillingStatus: (merchantId, status) =>
          sql`UPDATE merchants SET billing_status = ${status} WHERE id = ${merchantId}`.pipe(Effect.asVoid, Effect.orDie)
      }
    })
  )
}
