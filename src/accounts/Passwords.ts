import { scrypt } from "node:crypto"
import { Duration, Effect, Semaphore } from "effect"
import { constantTimeEqual } from "./ApiKeyFormat.ts"
import { RateLimited } from "./RateLimits.ts"

/**
 * Password hashes: `scrypt$N$r$p$<salt base64>$<hash hex>`, 16-byte random salt, 32-byte key.
 * Node's scrypt runs on the libuv thread pool, never on the event loop (the pure-JS one pushed
 * public status p50 from 2 ms to 210 ms under a login flood); a semaphore bounds how many run at
 * once, so that a flood queues instead of taking every pool thread and 128 MiB each. A hash that
 * cannot start within `waitMs` fails with RateLimited (429 with Retry-After): a long queue would
 * otherwise run the request out of its time budget, answered 503 as if the database had failed.
 */
export interface PasswordSettings {
  /** log2 of scrypt's N: 17 in production (OWASP), lower only to make tests fast. */
  readonly logN: number
  readonly concurrency: number
  /** How long a hash waits for a free slot before it is refused. */
  readonly waitMs: number
}

const R = 8
const P = 1

const derive = (password: string, salt: Buffer, n: number, r: number, p: number) =>
  new Promise<string>((resolve, reject) =>
    scrypt(password.normalize("NFKC"), salt, 32, { N: n, r, p, maxmem: 256 * n * r * p + 1024 * 1024 }, (error, key) =>
      error === null ? resolve(key.toString("hex")) : reject(error))
  )

const parse = (stored: string) => {
  const [scheme, n, r, p, salt, hash] = stored.split("$")
  if (scheme !== "scrypt" || hash === undefined) return undefined
  return { n: Number(n), r: Number(r), p: Number(p), salt: Buffer.from(salt, "base64"), hash }
}

export interface PasswordHasher {
  readonly hash: (password: string) => Effect.Effect<string, RateLimited>
  /** Whether the password matches; an unknown account is checked against a dummy hash of the same cost. */
  readonly verify: (password: string, stored: string | undefined) => Effect.Effect<boolean, RateLimited>
  /** Whether a stored hash is weaker than the current setting (rehashed at the next good login). */
  readonly needsRehash: (stored: string) => boolean
}

export const makePasswordHasher = (settings: PasswordSettings): Effect.Effect<PasswordHasher> =>
  Effect.gen(function*() {
    const semaphore = yield* Semaphore.make(settings.concurrency)
    const n = 2 ** settings.logN
    const busy = new RateLimited({ retryAfterSeconds: Math.max(1, Math.ceil(settings.waitMs / 1000)) })
    // Only the wait for a slot is bounded: a hash that has started runs to its end.
    const inSlot = <A>(work: Effect.Effect<A>): Effect.Effect<A, RateLimited> =>
      Effect.scoped(Effect.andThen(
        semaphore.takeScoped(1).pipe(Effect.timeoutOrElse({ duration: Duration.millis(settings.waitMs), orElse: () => Effect.fail(busy) })),
        work
      ))
    const hash = (password: string) =>
      inSlot(Effect.promise(async () => {
        const salt = Buffer.from(crypto.getRandomValues(new Uint8Array(16)))
        return `scrypt$${n}$${R}$${P}$${salt.toString("base64")}$${await derive(password, salt, n, R, P)}`
      }))
    // Unknown emails cost as much as known ones, so that timing does not tell which exist: they are
    // checked against a hash of the current cost that no password matches.
    const dummy = `scrypt$${n}$${R}$${P}$${Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64")}$${"0".repeat(64)}`
    return {
      hash,
      verify: (password, stored) =>
        inSlot(Effect.promise(async () => {
          const parsed = parse(stored ?? dummy)
          if (parsed === undefined) return false
          const candidate = await derive(password, parsed.salt, parsed.n, parsed.r, parsed.p)
          return constantTimeEqual(candidate, parsed.hash) && stored !== undefined
        })),
      needsRehash: (stored) => {
        const parsed = parse(stored)
        return parsed === undefined || parsed.n < n || parsed.r < R
      }
    }
  })
