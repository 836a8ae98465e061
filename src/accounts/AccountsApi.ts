import { Schema, Struct } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { BadRequest, Conflict, Forbidden, NotFound, ServiceUnavailable, TooManyRequests, Unauthorized } from "../http/ApiErrors.ts"
import { DashboardAuthentication } from "../http/Authentication.ts"
import { text, UuidParam } from "../http/RequestSchemas.ts"
import { jsonOf } from "../domain/EntitySchema.ts"
import { ApiKeyMode, ApiKeySummary, MAX_ACTIVE_API_KEYS } from "./ApiKey.ts"
import { User } from "./Merchant.ts"
import { DatabaseGate } from "../http/DatabaseGate.ts"

const Email = text(320).check(
  Schema.makeFilter<string>((value) => /^[^\s@]+@[^\s@]+$/.test(value), { message: "must be an email address" })
).annotateKey({ messageMissingKey: "is required" })

// Times go out as ISO 8601 text.
const UserView = jsonOf(User)
const AuthResponse = Schema.Struct({ user: UserView, token: Schema.String })

const ApiKeyView = jsonOf(ApiKeySummary)
/** The raw key is shown once, in the answer to its creation. */
const CreatedApiKeyView = ApiKeyView.mapFields(Struct.assign({ rawKey: Schema.String }))

export const AuthGroup = HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.post("signup", "/api/auth/signup", {
      payload: Schema.Struct({
        email: Email,
        password: Schema.String.annotate({ message: "must be a string" }).check(
          Schema.isMinLength(12, { message: "must be at least 12 characters" }),
          Schema.isMaxLength(1024, { message: "must be at most 1024 characters" })
        ).annotateKey({ messageMissingKey: "is required" })
      }),
      success: AuthResponse.pipe(HttpApiSchema.status(201)),
      error: [Forbidden, Conflict, TooManyRequests]
    }).annotate(OpenApi.Summary, "Sign up"),
    HttpApiEndpoint.post("login", "/api/auth/login", {
      payload: Schema.Struct({
        email: text(320).annotateKey({ messageMissingKey: "is required" }),
        password: text(1024).annotateKey({ messageMissingKey: "is required" })
      }),
      success: AuthResponse,
      error: [Unauthorized, Forbidden, TooManyRequests]
    }).annotate(OpenApi.Summary, "Log in"),
    HttpApiEndpoint.post("logout", "/api/auth/logout", {
      success: HttpApiSchema.NoContent,
      error: [Unauthorized, Forbidden, ServiceUnavailable]
    }).annotate(OpenApi.Summary, "Log out").annotate(
      OpenApi.Description,
      "Revokes the session. With the session cookie, the X-CSRF-Token header must carry the checkout_csrf cookie's value (403 otherwise); a bearer token needs none."
    )
  )
  .annotate(OpenApi.Description, "Dashboard sign-up, login and logout. Sessions are carried by the checkout_session cookie or Authorization: Bearer.")
  .middleware(DatabaseGate)

const KeyParams = Schema.Struct({ id: UuidParam })

export const KeysGroup = HttpApiGroup.make("keys")
  .add(
    HttpApiEndpoint.post("create", "/api/users/:id/checkout-api-key", {
      params: KeyParams,
      payload: [
        Schema.Struct({
          label: Schema.optionalKey(Schema.NullOr(text(100)).annotate({ message: "must be a string" })),
          mode: Schema.optionalKey(ApiKeyMode.annotate({
            message: "must be one of live, test",
            description: "`live` (the default) or `test`: a test key (svc_test_…) creates test invoices (livemode false) and reaches the test helpers."
          }))
        }),
        // Every field is optional, so the body may be omitted (DESIGN): no body decodes as null.
        Schema.Null
      ],
      success: CreatedApiKeyView.pipe(HttpApiSchema.status(201)),
      error: [NotFound, Conflict]
    }).annotate(OpenApi.Summary, "Create an API key"),
    HttpApiEndpoint.get("list", "/api/users/:id/checkout-api-keys", {
      params: KeyParams,
      success: Schema.Struct({
        keys: Schema.Array(ApiKeyView)
      }),
      error: NotFound
    }).annotate(OpenApi.Summary, "List API keys"),
    HttpApiEndpoint.delete("revoke", "/api/users/:id/checkout-api-key/:keyId", {
      params: Schema.Struct({ id: UuidParam, keyId: UuidParam }),
      success: HttpApiSchema.NoContent,
      error: NotFound
    }).annotate(OpenApi.Summary, "Revoke an API key")
  )
  .middleware(DashboardAuthentication)
  .middleware(DatabaseGate)
  .annotate(OpenApi.Description, "Checkout API keys of the signed-in user (session or bearer JWT; API keys get 403).")

/**
 * The accounts feature's HTTP errors (sign-up, login, sessions, API keys, authentication), each
 * declared once with its status and message; the endpoints above and the authentication middleware
 * list their statuses.
 */
export const AccountErrors = {
  missingCredential: () => new Unauthorized({ error: "Missing API key or session" }),
  invalidSession: () => new Unauthorized({ error: "Invalid or expired session" }),
  invalidApiKey: () => new Unauthorized({ error: "Invalid API key" }),
  invalidCredentials: () => new Unauthorized({ error: "Invalid email or password" }),
  /** A disabled account, whatever the credential: the spec says no more than this. */
  forbidden: () => new Forbidden({ error: "Forbidden" }),
  csrfMismatch: () => new Forbidden({ error: "Missing or invalid CSRF token: send the checkout_csrf cookie's value in X-CSRF-Token" }),
  signupClosed: () => new Forbidden({ error: "Sign-up is closed" }),
  statusUnavailable: () => new ServiceUnavailable({ error: "Account status cannot be verified; retry after recovery" }),
  accountSelected: () => new BadRequest({ error: "userId and user_id query fields are not allowed: private routes use the authenticated account" }),
  emailTaken: () => new Conflict({ error: "An account with this email already exists" }),
  userNotFound: () => new NotFound({ error: "User not found" }),
  tooManyApiKeys: (mode: "live" | "test" = "live") =>
    new Conflict({ error: mode === "live" ? `At most ${MAX_ACTIVE_API_KEYS} active API keys` : `At most ${MAX_ACTIVE_API_KEYS} active test API keys` }),
  apiKeyNotFound: () => new NotFound({ error: "API key not found" })
} as const
