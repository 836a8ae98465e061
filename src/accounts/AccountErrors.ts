import { BadRequest, Conflict, Forbidden, NotFound, ServiceUnavailable, Unauthorized } from "../http/ApiErrors.ts"
import { MAX_ACTIVE_API_KEYS } from "./Accounts.ts"

/**
 * The accounts feature's HTTP errors (sign-up, login, sessions, API keys, authentication), each
 * declared once with its status and message; AccountsApi.ts and the authentication middleware
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
  tooManyApiKeys: () => new Conflict({ error: `At most ${MAX_ACTIVE_API_KEYS} active API keys` }),
  apiKeyNotFound: () => new NotFound({ error: "API key not found" })
} as const
