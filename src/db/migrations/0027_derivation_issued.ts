import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Per account key, the highest derivation index this database ever handed out (issue #56). Kept by
 * a trigger on the counters, so no code path can move a counter without the record following, and
 * the record never goes down: a counter later found at or below it (a table restored on its own, a
 * row edited or deleted) is refused at start and when settings are saved (DerivationLedger.ts).
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
  `CREATE FUNCTION checkout_record_issued() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.next_index > 0 THEN
        INSERT INTO derivation_issued (xpub, highest_index) VALUES (NEW.xpub, NEW.next_index - 1)
        ON CONFLICT (xpub) DO UPDATE SET highest_index = EXCLUDED.highest_index, updated_at = now()
        WHERE derivation_issued.highest_index < EXCLUDED.highest_index;
      END IF;
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER derivation_counter_issued AFTER INSERT OR UPDATE ON derivation_counters
    FOR EACH ROW EXECUTE FUNCTION checkout_record_issued()`,
  // An event's delivery id counts the invoice's earlier events of its name (EventIdentity.ts).
  `CREATE INDEX outbox_by_invoice_event ON outbox (invoice_id, event, id)`
] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
