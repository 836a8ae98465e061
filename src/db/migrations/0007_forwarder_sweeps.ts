import { Effect } from "effect"
import { SqlClient } from "effect/sql"

const statements = [
  // Payments to a wallet-contract forwarder are swept to the merchant's recipient once confirmed.
  `ALTER TABLE payments ADD COLUMN sweep_status text CHECK (sweep_status IN ('pending', 'sent', 'swept'))`,
  `ALTER TABLE payments ADD COLUMN sweep_transaction_hash text`,
  `ALTER TABLE payments ADD COLUMN sweep_attempts integer NOT NULL DEFAULT 0`,
  `ALTER TABLE payments ADD COLUMN sweep_error text`,
  `ALTER TABLE payments ADD COLUMN sweep_next_attempt_at timestamptz`,
  `ALTER TABLE payments ADD COLUMN swept_at timestamptz`,
  `CREATE INDEX payments_to_sweep ON payments (network) WHERE sweep_status IN ('pending', 'sent')`
] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
