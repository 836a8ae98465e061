import { Effect } from "effect"
import { SqlClient } from "effect/sql"

const statements = [
  // Wakes the webhook dispatcher as soon as events commit (NOTIFY is delivered at commit), instead
  // of at its next poll; one notification per statement, whatever the number of rows.
  `CREATE FUNCTION checkout_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('checkout_outbox', '');
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER outbox_notify AFTER INSERT ON outbox FOR EACH STATEMENT EXECUTE FUNCTION checkout_outbox_notify()`
] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
