import { Context, Data, Effect, Layer, Option, Schema, Struct } from "effect"
import { SqlClient, type SqlError, SqlSchema } from "effect/sql"
import { MerchantId } from "../domain/Ids.ts"
import { ApiKey, ApiKeyMode, ApiKeyRow, type ApiKeySummary, ApiKeySummaryRow } from "./ApiKey.ts"
import { type AccountStatus, MerchantRow, type User, UserRow } from "./Merchant.ts"

/** The email is stored for another merchant already (the unique index said so). */
export class EmailAlreadyStored extends Data.TaggedError("EmailAlreadyStored")<{}> {}

/** What authentication reads of a key and its account, in one statement. */
export const KeyOwner = Schema.Struct({
  ...ApiKeyRow.mapFields(Struct.pick(["keyHash", "merchantId", "mode"])).fields,
  ...MerchantRow.mapFields(Struct.pick(["status", "billingStatus"])).fields
})
export type KeyOwner = typeof KeyOwner.Type

/** The unrevoked key with this hash and its account (the columns of `KeyOwner`); also the first step of ApiKeyAdmissionRepo's statement. */
export const selectKeyOwner = (sql: SqlClient.SqlClient, keyHash: string) =>
  sql`SELECT k.key_hash, k.merchant_id, k.mode, m.status, m.billing_status
    FROM api_keys k JOIN merchants m ON m.id = k.merchant_id
    WHERE k.key_hash = ${keyHash} AND k.revoked_at IS NULL`

const Count = Schema.Struct({ count: Schema.Int })
const ByMerchant = Schema.Struct({ merchantId: MerchantId })
const ByEmail = Schema.Struct({ email: Schema.String })
const LoginRow = UserRow.mapFields(Struct.assign(Struct.pick(MerchantRow.fields, ["status", "passwordHash"])))
export type Login = typeof LoginRow.Type
const NewKey = ApiKey.mapFields(Struct.pick(["id", "merchantId", "keyHash", "keyPrefix", "label", "mode"]))
const ByMerchantMode = Schema.Struct({ merchantId: MerchantId, mode: ApiKeyMode })

export interface NewMerchant {
  readonly id: MerchantId
  readonly email: string
  readonly isDemo: boolean
  readonly passwordHash: string | null
}

const isUniqueViolation = (error: SqlError.SqlError) => String((error as { reason?: { cause?: { code?: string } } }).reason?.cause?.code) === "23505"

/**
 * Persistence of merchant accounts, their API keys and recorded cross-account probes. SQL and
 * decode failures are defects here, except where a caller tells an unreachable database apart
 * (`findKeyOwner` keeps its SqlError).
 */
export class AccountsRepo extends Context.Service<AccountsRepo, {
  /** SqlError stays in the error channel: a connection failure means "the status cannot be verified". */
  readonly findKeyOwner: (keyHash: string) => Effect.Effect<Option.Option<KeyOwner>, SqlError.SqlError>
  readonly findUser: (id: string) => Effect.Effect<Option.Option<User>>
  readonly findLogin: (email: string) => Effect.Effect<Option.Option<Login>>
  readonly findByEmail: (email: string) => Effect.Effect<Option.Option<{ readonly id: MerchantId; readonly status: AccountStatus }>>
  readonly insertMerchant: (merchant: NewMerchant) => Effect.Effect<void, EmailAlreadyStored>
  /** Replaces the password hash only while it is still `stored` (a concurrent change wins). */
  readonly upgradePasswordHash: (id: string, stored: string, rehashed: string) => Effect.Effect<void>
  /** Locks the merchant row for the rest of the transaction. */
  readonly lockMerchant: (merchantId: MerchantId) => Effect.Effect<void>
  /** The merchant's unrevoked keys of one mode (each mode has its own limit). */
  readonly countActiveKeys: (merchantId: MerchantId, mode: ApiKeyMode) => Effect.Effect<number>
  /** Stores the key; answers its creation time. */
  readonly insertKey: (key: typeof NewKey.Type) => Effect.Effect<Date>
  readonly activeKeys: (merchantId: MerchantId) => Effect.Effect<ReadonlyArray<ApiKeySummary>>
  /** Revokes the merchant's unrevoked key; false when there is none with that id. */
  readonly revokeKey: (merchantId: MerchantId, keyId: string) => Effect.Effect<boolean>
  readonly setStatus: (merchantId: MerchantId, status: AccountStatus) => Effect.Effect<void>
  readonly setBillingStatus: (merchantId: MerchantId, status: "active" | "blocked") => Effect.Effect<void>
  readonly recordProbe: (merchantId: MerchantId, kind: string, detail: string) => Effect.Effect<void>
  /** The merchant's probes of the last day. */
  readonly countRecentProbes: (merchantId: MerchantId) => Effect.Effect<number>
  readonly forgetProbes: (merchantId: MerchantId) => Effect.Effect<void>
  readonly withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>()("Accounts/AccountsRepo") {
  static readonly layer = Layer.effect(
    AccountsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const findKeyOwner = SqlSchema.findOneOption({
        Request: Schema.Struct({ keyHash: Schema.String }),
        Result: KeyOwner,
        execute: ({ keyHash }) => selectKeyOwner(sql, keyHash)
      })
      const findUserById = SqlSchema.findOneOption({
        Request: Schema.Struct({ id: Schema.String }),
        Result: UserRow,
        execute: ({ id }) => sql`SELECT id, email, created_at FROM merchants WHERE id = ${id}`
      })
      const findLogin = SqlSchema.findOneOption({
        Request: ByEmail,
        Result: LoginRow,
        execute: ({ email }) => sql`SELECT id, email, created_at, status, password_hash FROM merchants WHERE email = ${email}`
      })
      const findByEmail = SqlSchema.findOneOption({
        Request: ByEmail,
        Result: MerchantRow.mapFields(Struct.pick(["id", "status"])),
        execute: ({ email }) => sql`SELECT id, status FROM merchants WHERE email = ${email}`
      })
      const countActiveKeys = SqlSchema.findOne({
        Request: ByMerchantMode,
        Result: Count,
        execute: ({ merchantId, mode }) => sql`SELECT count(*)::int AS count FROM api_keys WHERE merchant_id = ${merchantId} AND mode = ${mode} AND revoked_at IS NULL`
      })
      const insertKey = SqlSchema.findOne({
        Request: NewKey,
        Result: ApiKeyRow.mapFields(Struct.pick(["createdAt"])),
        execute: (key) => sql`INSERT INTO api_keys ${sql.insert(key)} RETURNING created_at`
      })
      const findActiveKeys = SqlSchema.findAll({
        Request: ByMerchant,
        Result: ApiKeySummaryRow,
        execute: ({ merchantId }) =>
          sql`SELECT id, key_prefix, label, mode, created_at FROM api_keys WHERE merchant_id = ${merchantId} AND revoked_at IS NULL
            ORDER BY created_at, id`
      })
      const revokeKey = SqlSchema.findOneOption({
        Request: Schema.Struct({ merchantId: Schema.String, keyId: Schema.String }),
        Result: ApiKeyRow.mapFields(Struct.pick(["id"])),
        execute: ({ merchantId, keyId }) =>
          sql`UPDATE api_keys SET revoked_at = now()
            WHERE id = ${keyId} AND merchant_id = ${merchantId} AND revoked_at IS NULL RETURNING id`
      })
      const countRecentProbes = SqlSchema.findOne({
        Request: ByMerchant,
        Result: Count,
        execute: ({ merchantId }) =>
          sql`SELECT count(*)::int AS count FROM access_probes
            WHERE merchant_id = ${merchantId} AND created_at > now() - interval '1 day'`
      })

      return {
        findKeyOwner: (keyHash) => findKeyOwner({ keyHash }).pipe(Effect.catchTag("SchemaError", Effect.die)),
        findUser: (id) => Effect.orDie(findUserById({ id })),
        findLogin: (email) => Effect.orDie(findLogin({ email })),
        findByEmail: (email) => Effect.orDie(findByEmail({ email })),
        insertMerchant: (merchant) =>
          sql`INSERT INTO merchants ${sql.insert({ ...merchant })}`.pipe(
            Effect.asVoid,
            Effect.catchTag("SqlError", (error) => isUniqueViolation(error) ? Effect.fail(new EmailAlreadyStored()) : Effect.die(error))
          ),
        upgradePasswordHash: (id, stored, rehashed) => Effect.orDie(sql`UPDATE merchants SET password_hash = ${rehashed} WHERE id = ${id} AND password_hash = ${stored}`),
        lockMerchant: (merchantId) => Effect.orDie(sql`SELECT id FROM merchants WHERE id = ${merchantId} FOR UPDATE`),
        countActiveKeys: (merchantId, mode) => countActiveKeys({ merchantId: MerchantId.make(merchantId), mode }).pipe(Effect.map(({ count }) => count), Effect.orDie),
        insertKey: (key) => insertKey(key).pipe(Effect.map(({ createdAt }) => createdAt), Effect.orDie),
        activeKeys: (merchantId) => Effect.orDie(findActiveKeys({ merchantId: MerchantId.make(merchantId) })),
        revokeKey: (merchantId, keyId) => revokeKey({ merchantId, keyId }).pipe(Effect.map(Option.isSome), Effect.orDie),
        setStatus: (merchantId, status) => Effect.orDie(sql`UPDATE merchants SET status = ${status} WHERE id = ${merchantId}`),
        setBillingStatus: (merchantId, status) => Effect.orDie(sql`UPDATE merchants SET billing_status = ${status} WHERE id = ${merchantId}`),
        recordProbe: (merchantId, kind, detail) => Effect.orDie(sql`INSERT INTO access_probes ${sql.insert({ merchantId, kind, detail })}`),
        countRecentProbes: (merchantId) => countRecentProbes({ merchantId: MerchantId.make(merchantId) }).pipe(Effect.map(({ count }) => count), Effect.orDie),
        forgetProbes: (merchantId) => Effect.orDie(sql`DELETE FROM access_probes WHERE merchant_id = ${merchantId}`),
        withTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))
      }
    })
  )
}
