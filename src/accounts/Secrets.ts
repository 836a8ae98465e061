import { Context, Effect, Layer, Redacted } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { SecretsRepo } from "./SecretsRepo.ts"

/**
 * Signing and encryption secrets: from configuration when given (required in production: the
 * fallback below is refused there), otherwise generated once per database and shared by every instance that uses it.
 */
export class Secrets extends Context.Service<Secrets, {
  readonly jwtSecret: Uint8Array
  readonly encryptionKey: Uint8Array
}>()("Accounts/Secrets") {
  static readonly layer = Layer.effect(
    Secrets,
    Effect.gen(function*() {
      const config = yield* AppConfig
      const repo = yield* SecretsRepo
      const stored = (name: string) =>
        Effect.gen(function*() {
          const generated = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64")
          const value = yield* repo.storeOnce(name, generated)
          return new Uint8Array(Buffer.from(value, "base64"))
        })
      const fromConfig = (value: Redacted.Redacted<string> | undefined, name: string) =>
        value !== undefined
          ? Effect.succeed(new TextEncoder().encode(Redacted.value(value)))
          : config.env === "production"
          // Never a secret kept in the database next to what it protects, whatever built the config.
          ? Effect.die(new Error(`The ${name} must come from configuration in production (CHECKOUT_JWT_SECRET, CHECKOUT_ENCRYPTION_KEY)`))
          : stored(name)
      return {
        jwtSecret: yield* fromConfig(config.jwtSecret, "jwt_secret"),
        encryptionKey: yield* fromConfig(config.encryptionKey, "encryption_key")
      }
    })
  ).pipe(Layer.provide(SecretsRepo.layer))
}
