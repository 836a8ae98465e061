/**
 * Operator commands against the service's database (DATABASE_URL, or the embedded data directory:
 * stop the server first, PGlite serves one process at a time).
 *
 *   npm run cli -- account disable <email>    npm run cli -- account enable <email>
 *   npm run cli -- billing block <email>      npm run cli -- billing unblock <email>
 */
import { Console, Effect, Layer } from "effect"
import { Accounts } from "../src/accounts/Accounts.ts"
import { AppConfig, parseConfig } from "../src/config/AppConfig.ts"
import { DatabaseLive } from "../src/db/Database.ts"

const [area, action, email] = process.argv.slice(2)
const usage = "usage: npm run cli -- account disable|enable <email> | billing block|unblock <email>"

const program = Effect.gen(function*() {
  const accounts = yield* Accounts
  if (email === undefined) return yield* Effect.fail(usage)
  const merchant = yield* accounts.findMerchantByEmail(email)
  if (merchant === undefined) return yield* Effect.fail(`no account with email ${email}`)
  if (area === "account" && (action === "disable" || action === "enable")) {
    yield* accounts.setStatus(merchant.id, action === "disable" ? "disabled" : "active")
    yield* Console.log(`account ${email} ${action === "disable" ? "disabled (sessions revoked)" : "enabled"}`)
  } else if (area === "billing" && (action === "block" || action === "unblock")) {
    yield* accounts.setBillingStatus(merchant.id, action === "block" ? "blocked" : "active")
    yield* Console.log(`billing of ${email} ${action === "block" ? "blocks" : "allows"} invoice creation`)
  } else {
    return yield* Effect.fail(usage)
  }
})

const layer = Accounts.layer.pipe(
  Layer.provideMerge(DatabaseLive),
  Layer.provideMerge(Layer.succeed(AppConfig, parseConfig(process.env)))
)

Effect.runPromise(program.pipe(Effect.provide(layer))).catch((error: unknown) => {
  console.error(typeof error === "string" ? error : String(error))
  process.exit(1)
})
