import { Effect } from "effect"
import { SqlClient } from "effect/sql"

const statements = [
  // A payment's option quote, so that the payments of one option are valued together: paying the
  // quote in several parts is worth exactly the invoice amount, not a micro-dollar less per part.
  `ALTER TABLE payments ADD COLUMN quoted_atomic numeric(78, 0)`,
  `UPDATE payments p SET quoted_atomic = o.quoted_atomic FROM payment_options o WHERE o.id = p.payment_option_id`,
  `ALTER TABLE payments ALTER COLUMN quoted_atomic SET NOT NULL`,
  // Evidence first seen in a mempool (bitcoin 0-conf): while it has no block it must be checked
  // for replacement or eviction, which simulated evidence (also without a block) never is.
  `ALTER TABLE payments ADD COLUMN seen_in_mempool boolean NOT NULL DEFAULT false`,
  `CREATE INDEX payments_in_mempool ON payments (network)
    WHERE seen_in_mempool AND block_height IS NULL AND invalidated_at IS NULL`
] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
