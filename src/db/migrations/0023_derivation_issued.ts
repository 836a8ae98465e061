import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Per account key, the highest derivation index this database ever handed out (issue #56), written
 * in the same statement as every counter move (DerivationLedgerRepo.recordIssued; a trigger on the
 * counters doing it failed the fault suite's one-invoice-per-key check, cause not established).
 * It never goes down: a counter later found at or below it (a table restored on its own, a row
 * edited or deleted) is refused at start and when settings are saved (DerivationLedger.ts).
 * And an index for webhook event identity (EventIdentity.ts).
 */
const statements = [
  `CREATE TABLE derivation_issued (
    xpub text PRIMARY KEY,
    highest_index bigint NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
  )`,
  `INSERT INTO derivation_issued (xpub, highest_index)
    SELECT xpub, max(highest) FROM (
      SELECT xpub, next_index - 1 AS highest FROM derivation_counters WHERE next_index > 0
      UNION ALL SELECT xpub, max(derivation_index) FROM bitcoin_address_pool GROUP BY xpub
    ) AS known GROUP BY xpub`,
  // An event's delivery id counts the invoice's earlier events of its name (EventIdentity.ts).
  `CREATE INDEX outbox_by_invoice_event ON outbox (invoice_id, event, id)`
] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
