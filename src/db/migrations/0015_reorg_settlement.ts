import { Effect } from "effect"
import { SqlClient } from "effect/sql"

const statements = [
  // Evidence of a confirmed invoice invalidated by a reorganisation: the height below which the chain
  // did not change. The invoice is judged once the watcher has processed the required confirmations
  // beyond it; cleared when the payment is observed again or once judged.
  `ALTER TABLE payments ADD COLUMN reorg_point bigint`,
  `CREATE INDEX payments_reorg_pending ON payments (network) WHERE reorg_point IS NOT NULL`,
  // EVM evidence identity moves from the block-level log index to the log's position within its
  // transaction. Existing rows cannot be recomputed here (that needs the chain), so they are marked:
  // a new observation of the same transfer under its new identity is not counted twice (see InvoiceRepo).
  `ALTER TABLE payments ADD COLUMN block_log_index boolean NOT NULL DEFAULT false`,
  `UPDATE payments SET block_log_index = true WHERE network IN ('ethereum', 'arbitrum', 'base') AND block_height IS NOT NULL`
] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
