import { Context, Data, Effect, Layer, Option, Schema, Struct } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { AppConfig } from "../config/AppConfig.ts"
import { ApiKeyId, MerchantId } from "../domain/Ids.ts"
import { ApiKey, ApiKeyRow, type ApiKeySummary, ApiKeySummaryRow } from "./ApiKey.ts"
import { type AccountStatus, type BillingStatus, MerchantRow, type User } from "./Merchant.ts"
import { constantTimeEqual, generateApiKey, hashApiKey, keyPrefixOf, looksLikeApiKey } from "./ApiKeyFormat.ts"
import { makePasswordHasher } from "./Passwords.ts"
import type { RateLimited } from "./RateLimits.ts"
import { statusUnavailableOrDie } from "../db/ConnectionFailure.ts"

export class InvalidApiKey extends Data.TaggedError("InvalidApiKey")<{}> {}
export class AccountDisabled extends Data.TaggedError("AccountDisabled")<{}> {}
export class AccountStatusUnavailable extends Data.TaggedError("AccountStatusUnavailable")<{}> {}
export class EmailTaken extends Data.TaggedError("EmailTaken")<{}> {}
export class InvalidCredentials extends Data.TaggedError("InvalidCredentials")<{}> {}
export class TooManyApiKeys extends Data.TaggedError("TooManyApiKeys")<{}> {}
export class ApiKeyNotFound extends Data.TaggedError("ApiKeyNotFound")<{}> {}

export const MAX_ACTIVE_API_KEYS = 3

export interface AuthenticatedMerchant {
  readonly merchantId: MerchantId
  readonly billingStatus: BillingStatus
}

export type { ApiKeySummary, User }

export interface CreatedApiKey extends ApiKeySummary {
  readonly rawKey: string
}

const Count = Schema.Struct({ count: Schema.Int })
const ByMerchant = Schema.Struct({ merchantId: MerchantId })
const ByEmail = Schema.Struct({ email: Schema.String })

/** What authentication reads of a key and its account, in one statement. */
export const KeyOwner = Schema.Struct({
  ...ApiKeyRow.mapFields(Struct.pick(["keyHash", "merchantId"])).fields,
  ...MerchantRow.mapFields(Struct.pick(["status", "billingStatus"])).fields
})

/** The unrevoked key with this hash and its account (the columns of `KeyOwner`). */
export const selectKeyOwner = (sql: SqlClient.SqlClient, keyHash: string) =>
  sql`SELECT k.key_hash, k.merchant_id, m.status, m.billing_status
    FROM api_keys k JOIN merchants m ON m.id = k.merchant_id
    WHERE k.key_hash = ${keyHash} AND k.revoked_at IS NULL`

/** The account a key lookup authenticates: none for no (or another) key, refused while disabled. */
export const authenticatedOwner = (
  found: typeof KeyOwner.Type | undefined,
  keyHash: string
): Effect.Effect<AuthenticatedMerchant, InvalidApiKey | AccountDisabled> => {
  if (found === undefined || !constantTimeEqual(found.keyHash, keyHash)) return Effect.fail(new InvalidApiKey())
  if (found.status !== "active") return Effect.fail(new AccountDisabled())
  return Effect.succeed({ merchantId: found.merchantId, billingStatus: found.billingStatus })
}
const UserRow = MerchantRow.mapFields(Struct.pick(["id", "email", "createdAt"]))
const LoginRow = MerchantRow.mapFields(Struct.pick(["id", "email", "createdAt", "status", "passwordHash"]))

/** Merchant accounts, their passwords and API keys (only SHA-256 hashes of keys are stored). */
export class Accounts extends Context.Service<Accounts, {
  readonly authenticateApiKey: (rawKey: string) => Effect.Effect<AuthenticatedMerchant, InvalidApiKey | AccountDisabled | AccountStatusUnavailable>
  readonly createMerchant: (input: { readonly email: string; readonly isDemo?: boolean; readonly password?: string }) => Effect.Effect<MerchantId>
  /** RateLimited: the password hash could not start in time (too many at once). */
  readonly signUp: (email: string, password: string) => Effect.Effect<User, EmailTaken | RateLimited>
  readonly logIn: (email: string, password: string) => Effect.Effect<User, InvalidCredentials | AccountDisabled | RateLimited>
  readonly findUser: (merchantId: string) => Effect.Effect<User | undefined>
  readonly findMerchantByEmail: (email: string) => Effect.Effect<{ readonly id: MerchantId; readonly status: AccountStatus } | undefined>
  readonly createApiKey: (merchantId: string, label: string) => Effect.Effect<CreatedApiKey, TooManyApiKeys>
  readonly listApiKeys: (merchantId: string) => Effect.Effect<ReadonlyArray<ApiKeySummary>>
  readonly revokeApiKey: (merchantId: string, keyId: string) => Effect.Effect<void, ApiKeyNotFound>
  /** Disabling revokes the account's sessions; enabling forgives its recorded cross-account probes. */
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
        Request: ByMerchant,
        Result: Count,
        execute: ({ merchantId }) => sql`SELECT count(*)::int AS count FROM api_keys WHERE merchant_id = ${merchantId} AND revoked_at IS NULL`
      })
      const insertKey = SqlSchema.findOne({
        Request: ApiKey.mapFields(Struct.pick(["id", "merchantId", "keyHash", "keyPrefix", "label"])),
        Result: ApiKeyRow.mapFields(Struct.pick(["createdAt"])),
        execute: (key) => sql`INSERT INTO api_keys ${sql.insert(key)} RETURNING created_at`
      })
      const findActiveKeys = SqlSchema.findAll({
        Request: ByMerchant,
        Result: ApiKeySummaryRow,
        execute: ({ merchantId }) =>
          sql`SELECT id, key_prefix, label, created_at FROM api_keys WHERE merchant_id = ${merchantId} AND revoked_at IS NULL
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

      // The operator's disable keeps the sessions: they answer 403 Forbidden, as the spec's table
      // says, until the account is enabled again. A probe-disabled account's sessions are revoked.
      const setStatus = Effect.fn("Accounts.setStatus")(function*(merchantId: string, status: "active" | "disabled", revokeSessions = false) {
        yield* sql`UPDATE merchants SET status = ${status} WHERE id = ${merchantId}`
        if (status === "disabled") {
          if (revokeSessions) yield* sql`UPDATE sessions SET revoked_at = now() WHERE merchant_id = ${merchantId} AND revoked_at IS NULL`
        } else {
          // Enabling forgives the probes that disabled the account: counted again, the day's
          // earlier probes would disable it on the next one.
          yield* sql`DELETE FROM access_probes WHERE merchant_id = ${merchantId}`
        }
      }, sql.withTransaction, Effect.orDie)

      const insertMerchant = Effect.fnUntraced(function*(
        { email, isDemo = false, password }: { readonly email: string; readonly isDemo?: boolean; readonly password?: string }
      ) {
        const id = MerchantId.make(crypto.randomUUID())
        const passwordHash = password === undefined ? null : yield* passwords.hash(password)
        yield* sql`INSERT INTO merchants ${sql.insert({ id, email: email.toLowerCase(), isDemo, passwordHash })}`
        return id
      })

      return {
        authenticateApiKey: Effect.fn("Accounts.authenticateApiKey")(function*(rawKey) {
          if (!looksLikeApiKey(rawKey)) return yield* new InvalidApiKey()
          const hash = hashApiKey(rawKey)
          const found = yield* findKeyOwner({ keyHash: hash }).pipe(
            Effect.catchTag("SqlError", statusUnavailableOrDie(() => new AccountStatusUnavailable())),
            Effect.catchTag("SchemaError", Effect.die)
          )
          return yield* authenticatedOwner(Option.getOrUndefined(found), hash)
        }),
        createMerchant: Effect.fn("Accounts.createMerchant")(function*(input) {
          return yield* insertMerchant(input)
        }, Effect.orDie),
        signUp: Effect.fn("Accounts.signUp")(function*(email, password) {
          const normalized = email.toLowerCase()
          if (Option.isSome(yield* findByEmail({ email: normalized }))) return yield* new EmailTaken()
          const id = yield* insertMerchant({ email, password }).pipe(
            Effect.catchTag("SqlError", (error) =>
              String((error as { reason?: { cause?: { code?: string } } }).reason?.cause?.code) === "23505"
                ? Effect.fail(new EmailTaken())
                : Effect.die(error))
          )
          return yield* findUserById({ id }).pipe(Effect.flatMap(Effect.fromOption))
        }, Effect.catchTags({ SqlError: Effect.die, SchemaError: Effect.die, NoSuchElementError: Effect.die })),
        logIn: Effect.fn("Accounts.logIn")(function*(email, password) {
          const found = yield* findLogin({ email: email.toLowerCase() })
          const row = Option.getOrUndefined(found)
          const stored = row?.passwordHash ?? undefined
          const valid = yield* passwords.verify(password, stored)
          if (row === undefined || stored === undefined || !valid) return yield* new InvalidCredentials()
          if (row.status !== "active") return yield* new AccountDisabled()
          if (passwords.needsRehash(stored)) {
            // Best effort: with every hashing slot busy the upgrade waits for the next good login.
            const rehashed = yield* Effect.option(passwords.hash(password))
            if (Option.isSome(rehashed)) yield* sql`UPDATE merchants SET password_hash = ${rehashed.value} WHERE id = ${row.id} AND password_hash = ${stored}`
          }
          return { id: row.id, email: row.email, createdAt: row.createdAt }
        }, Effect.catchTags({ SqlError: Effect.die, SchemaError: Effect.die })),
        findUser: Effect.fn("Accounts.findUser")(function*(merchantId) {
          return Option.getOrUndefined(yield* findUserById({ id: merchantId }))
        }, Effect.orDie),
        findMerchantByEmail: Effect.fn("Accounts.findMerchantByEmail")(function*(email) {
          return Option.getOrUndefined(yield* findByEmail({ email: email.toLowerCase() }))
        }, Effect.orDie),
        createApiKey: Effect.fn("Accounts.createApiKey")(function*(merchantId, label) {
          // Lock the merchant row so that concurrent creations cannot pass the limit together.
          yield* sql`SELECT id FROM merchants WHERE id = ${merchantId} FOR UPDATE`
          const active = yield* countActiveKeys({ merchantId: MerchantId.make(merchantId) })
          if (active.count >= MAX_ACTIVE_API_KEYS) return yield* new TooManyApiKeys()
          const rawKey = generateApiKey()
          const key = {
            id: ApiKeyId.make(crypto.randomUUID()),
            merchantId: MerchantId.make(merchantId),
            keyHash: hashApiKey(rawKey),
            keyPrefix: keyPrefixOf(rawKey),
            label
          }
          const { createdAt } = yield* insertKey(key)
          return { id: key.id, rawKey, keyPrefix: key.keyPrefix, label, createdAt }
        }, sql.withTransaction, Effect.catchTags({ SqlError: Effect.die, SchemaError: Effect.die, NoSuchElementError: Effect.die })),
        listApiKeys: Effect.fn("Accounts.listApiKeys")(function*(merchantId) {
          return yield* findActiveKeys({ merchantId: MerchantId.make(merchantId) })
        }, Effect.orDie),
        revokeApiKey: Effect.fn("Accounts.revokeApiKey")(function*(merchantId, keyId) {
          const revoked = yield* revokeKey({ merchantId, keyId })
          if (Option.isNone(revoked)) return yield* new ApiKeyNotFound()
        }, Effect.catchTags({ SqlError: Effect.die, SchemaError: Effect.die })),
        setStatus,
        setBillingStatus: Effect.fn("Accounts.setBillingStatus")(function*(merchantId, status) {
          yield* sql`UPDATE merchants SET billing_status = ${status} WHERE id = ${merchantId}`
        }, Effect.orDie),
        recordProbe: Effect.fn("Accounts.recordProbe")(function*(merchantId, kind, detail) {
          yield* sql`INSERT INTO access_probes ${sql.insert({ merchantId, kind, detail: detail.slice(0, 500) })}`
          const { count } = yield* countRecentProbes({ merchantId: MerchantId.make(merchantId) })
          const reached = count >= config.probeThreshold
          yield* Effect.logWarning("Cross-account probe").pipe(Effect.annotateLogs({ merchantId, kind, reached }))
          if (reached) yield* setStatus(merchantId, "disabled", true)
          return reached
        }, Effect.orDie)
      }
    })
  )
}
