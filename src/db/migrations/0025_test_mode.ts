import { Effect } from "effect"
import { SqlClient } from "effect/sql"

// Test mode (issue #55): each API key is live or test; an invoice created with a test key is a test
// invoice (livemode false) and never mixes with live ones.
const statements = [
  `ALTER TABLE api_keys ADD COLUMN mode text NOT NULL DEFAULT 'live' CHECK (mode IN ('live', 'test'))`,
  `ALTER TABLE invoices ADD COLUMN livemode boolean NOT NULL DEFAULT true`,
  `CREATE INDEX invoices_by_merchant_mode_created ON invoices (merchant_id, livemode, created_at DESC, id)`
] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
