import { Context, Data, Effect, Layer, Option } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { ApiKeyId, MerchantId } from "../domain/Ids.ts"
import { type ApiKeyMode, type ApiKeySummary, MAX_ACTIVE_API_KEYS } from "./ApiKey.ts"
import { AccountsRepo, type KeyOwner } from "./AccountsRepo.ts"
import type { AccountStatus, BillingStatus, User } from "./Merchant.ts"
import { constantTimeEqual, generateApiKey, hashApiKey, keyPrefixOf, looksLikeApiKey } from "./ApiKeyFormat.ts"
import { makePasswordHasher } from "./Passwords.ts"
import type { RateLimited } from "./RateLimits.ts"
import { statusUnavailableOrDie } from "../db/ConnectionFailure.ts"
import { SessionsRepo } from "./SessionsRepo.ts"

export class InvalidApiKey extends Data.TaggedError("InvalidApiKey")<{}> {}
export class AccountDisabled extends Data.TaggedError("AccountDisabled")<{}> {}
export class AccountStatusUnavailable extends Data.TaggedError("AccountStatusUnavailable")<{}> {}
export class EmailTaken extends Data.TaggedError("EmailTaken")<{}> {}
export class InvalidCredentials extends Data.TaggedError("InvalidCredentials")<{}> {}
export class TooManyApiKeys extends Data.TaggedError("TooManyApiKeys")<{}> {}
export class ApiKeyNotFound extends Data.TaggedError("ApiKeyNotFound")<{}> {}

export interface AuthenticatedMerchant {
  readonly merchantId: MerchantId
  readonly billingStatus: BillingStatus
  /** false for a test key: the request sees and creates test invoices only. */
  readonly livemode: boolean
}

export type { ApiKeySummary, User }

export interface CreatedApiKey extends ApiKeySummary {
  readonly rawKey: string
}

/** The account a key lookup authenticates: none for no (or another) key, refused while disabled. */
export const authenticatedOwner = (
  found: KeyOwner | undefined,
  keyHash: string
): Effect.Effect<AuthenticatedMerchant, InvalidApiKey | AccountDisabled> => {
  if (found === undefined || !constantTimeEqual(found.keyHash, keyHash)) return Effect.fail(new InvalidApiKey())
  if (found.status !== "active") return Effect.fail(new AccountDisabled())
  return Effect.succeed({ merchantId: found.merchantId, billingStatus: found.billingStatus, livemode: found.mode === "live" })
}

type Repo = AccountsRepo["Service"]
type PasswordHasher = Effect.Success<ReturnType<typeof makePasswordHasher>>

/**
 * The operator's disable keeps the sessions: they answer 403 Forbidden, as the spec's table says,
 * until the account is enabled again. A probe-disabled account's sessions are revoked.
 */
const statusChanges = (repo: Repo, sessions: SessionsRepo["Service"]) =>
  Effect.fn("Accounts.setStatus")(function*(merchantId: MerchantId, status: "active" | "disabled", revokeSessions = false) {
    yield* repo.setStatus(merchantId, status)
    if (status === "disabled") {
      if (revokeSessions) yield* sessions.revokeAll(merchantId)
    } else {
      // Enabling forgives the probes that disabled the account: counted again, the day's
      // earlier probes would disable it on the next one.
      yield* repo.forgetProbes(merchantId)
    }
  }, repo.withTransaction)

const merchantInserter = (repo: Repo, passwords: PasswordHasher) =>
  Effect.fnUntraced(function*(
    { email, isDemo = false, password }: { readonly email: string; readonly isDemo?: boolean; readonly password?: string }
  ) {
    const id = MerchantId.make(crypto.randomUUID())
    const passwordHash = password === undefined ? null : yield* passwords.hash(password)
    yield* repo.insertMerchant({ id, email: email.toLowerCase(), isDemo, passwordHash })
    return id
  })

/** Who an account is: creation, sign-up, log-in, lookups and API-key authentication. */
const signUpAndLogIn = (repo: Repo, passwords: PasswordHasher) => {
  const insertMerchant = merchantInserter(repo, passwords)
  return {
    authenticateApiKey: Effect.fn("Accounts.authenticateApiKey")(function*(rawKey: string) {
      if (!looksLikeApiKey(rawKey)) return yield* new InvalidApiKey()
      const hash = hashApiKey(rawKey)
      const found = yield* repo.findKeyOwner(hash).pipe(
        Effect.catchTag("SqlError", statusUnavailableOrDie(() => new AccountStatusUnavailable()))
      )
      return yield* authenticatedOwner(Option.getOrUndefined(found), hash)
    }),
    createMerchant: Effect.fn("Accounts.createMerchant")(function*(input: { readonly email: string; readonly isDemo?: boolean; readonly password?: string }) {
      return yield* insertMerchant(input)
    }, Effect.orDie),
    signUp: Effect.fn("Accounts.signUp")(function*(email: string, password: string) {
      const normalized = email.toLowerCase()
      if (Option.isSome(yield* repo.findByEmail(normalized))) return yield* new EmailTaken()
      const id = yield* insertMerchant({ email, password }).pipe(Effect.catchTag("EmailAlreadyStored", () => Effect.fail(new EmailTaken())))
      return yield* repo.findUser(id).pipe(Effect.flatMap(Effect.fromOption))
    }, Effect.catchTag("NoSuchElementError", Effect.die)),
    logIn: Effect.fn("Accounts.logIn")(function*(email: string, password: string) {
      const found = yield* repo.findLogin(email.toLowerCase())
      const row = Option.getOrUndefined(found)
      const stored = row?.passwordHash ?? undefined
      const valid = yield* passwords.verify(password, stored)
      if (row === undefined || stored === undefined || !valid) return yield* new InvalidCredentials()
      if (row.status !== "active") return yield* new AccountDisabled()
      if (passwords.needsRehash(stored)) {
        // Best effort: with every hashing slot busy the upgrade waits for the next good login.
        const rehashed = yield* Effect.option(passwords.hash(password))
        if (Option.isSome(rehashed)) yield* repo.upgradePasswordHash(row.id, stored, rehashed.value)
      }
      return { id: row.id, email: row.email, createdAt: row.createdAt }
    }),
    findUser: Effect.fn("Accounts.findUser")(function*(merchantId: MerchantId) {
      return yield* repo.findUser(merchantId)
    }),
    findMerchantByEmail: Effect.fn("Accounts.findMerchantByEmail")(function*(email: string) {
      return Option.getOrUndefined(yield* repo.findByEmail(email.toLowerCase()))
    })
  }
}

/** An account's API keys: at most MAX_ACTIVE_API_KEYS active ones in each mode. */
const apiKeys = (repo: Repo) => ({
  createApiKey: Effect.fn("Accounts.createApiKey")(function*(merchantId: MerchantId, label: string, mode: ApiKeyMode = "live") {
    // Lock the merchant row so that concurrent creations cannot pass the limit together.
    yield* repo.lockMerchant(merchantId)
    const active = yield* repo.countActiveKeys(merchantId, mode)
    if (active >= MAX_ACTIVE_API_KEYS) return yield* new TooManyApiKeys()
    const rawKey = generateApiKey(mode)
    const key = {
      id: ApiKeyId.make(crypto.randomUUID()),
      merchantId: MerchantId.make(merchantId),
      keyHash: hashApiKey(rawKey),
      keyPrefix: keyPrefixOf(rawKey),
      label,
      mode
    }
    const createdAt = yield* repo.insertKey(key)
    return { id: key.id, rawKey, keyPrefix: key.keyPrefix, label, mode, createdAt }
  }, repo.withTransaction),
  listApiKeys: Effect.fn("Accounts.listApiKeys")(function*(merchantId: MerchantId) {
    return yield* repo.activeKeys(merchantId)
  }),
  revokeApiKey: Effect.fn("Accounts.revokeApiKey")(function*(merchantId: MerchantId, keyId: string) {
    if (!(yield* repo.revokeKey(merchantId, keyId))) return yield* new ApiKeyNotFound()
  })
})

const probeRecorder = (repo: Repo, threshold: number, setStatus: ReturnType<typeof statusChanges>) =>
  Effect.fn("Accounts.recordProbe")(function*(merchantId: MerchantId, kind: string, detail: string) {
    yield* repo.recordProbe(merchantId, kind, detail.slice(0, 500))
    const count = yield* repo.countRecentProbes(merchantId)
    const reached = count >= threshold
    yield* Effect.logWarning("Cross-account probe").pipe(Effect.annotateLogs({ merchantId, kind, reached }))
    if (reached) yield* setStatus(merchantId, "disabled", true)
    return reached
  })

/** Merchant accounts, their passwords and API keys (only SHA-256 hashes of keys are stored). */
export class Accounts extends Context.Service<Accounts, {
  readonly authenticateApiKey: (rawKey: string) => Effect.Effect<AuthenticatedMerchant, InvalidApiKey | AccountDisabled | AccountStatusUnavailable>
  readonly createMerchant: (input: { readonly email: string; readonly isDemo?: boolean; readonly password?: string }) => Effect.Effect<MerchantId>
  /** RateLimited: the password hash could not start in time (too many at once). */
  readonly signUp: (email: string, password: string) => Effect.Effect<User, EmailTaken | RateLimited>
  readonly logIn: (email: string, password: string) => Effect.Effect<User, InvalidCredentials | AccountDisabled | RateLimited>
  readonly findUser: (merchantId: MerchantId) => Effect.Effect<Option.Option<User>>
  readonly findMerchantByEmail: (email: string) => Effect.Effect<{ readonly id: MerchantId; readonly status: AccountStatus } | undefined>
  readonly createApiKey: (merchantId: MerchantId, label: string, mode?: ApiKeyMode) => Effect.Effect<CreatedApiKey, TooManyApiKeys>
  readonly listApiKeys: (merchantId: MerchantId) => Effect.Effect<ReadonlyArray<ApiKeySummary>>
  readonly revokeApiKey: (merchantId: MerchantId, keyId: string) => Effect.Effect<void, ApiKeyNotFound>
  /** Disabling revokes the account's sessions; enabling forgives its recorded cross-account probes. */
  readonly setStatus: (merchantId: MerchantId, status: "active" | "disabled") => Effect.Effect<void>
  readonly setBillingStatus: (merchantId: MerchantId, status: "active" | "blocked") => Effect.Effect<void>
  /** Records a cross-account probe; at the configured threshold the account is disabled. Returns whether it was. */
  readonly recordProbe: (merchantId: MerchantId, kind: string, detail: string) => Effect.Effect<boolean>
}>()("Accounts/Accounts") {
  static readonly layer = Layer.effect(
    Accounts,
    Effect.gen(function*() {
      const repo = yield* AccountsRepo
      const sessions = yield* SessionsRepo
      const config = yield* AppConfig
      const passwords = yield* makePasswordHasher(config.passwords)
      const setStatus = statusChanges(repo, sessions)
      return {
        ...signUpAndLogIn(repo, passwords),
        ...apiKeys(repo),
        setStatus,
        setBillingStatus: Effect.fn("Accounts.setBillingStatus")(function*(merchantId, status) {
          yield* repo.setBillingStatus(merchantId, status)
        }),
        recordProbe: probeRecorder(repo, config.probeThreshold, setStatus)
      }
    })
  ).pipe(Layer.provide([AccountsRepo.layer, SessionsRepo.layer]))
}
