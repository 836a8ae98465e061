import { Effect } from "effect"
import { SqlClient } from "effect/sql"

const statements = [
  // Every committed change of an invoice or of one of its payments names the invoice on one channel
  // (NOTIFY is delivered at commit, one per invoice per transaction), so that the status streams of
  // every instance hear it: a change of confirmations alone writes no outbox event (issue #47).
  `CREATE FUNCTION checkout_invoice_changed_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_TABLE_NAME = 'payments' THEN
        PERFORM pg_notify('checkout_invoice_changed', NEW.invoice_id::text);
      ELSE
        PERFORM pg_notify('checkout_invoice_changed', NEW.id::text);
      END IF;
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER invoice_changed_notify AFTER UPDATE ON invoices FOR EACH ROW WHEN (OLD IS DISTINCT FROM NEW)
    EXECUTE FUNCTION checkout_invoice_changed_notify()`,
  `CREATE TRIGGER payment_changed_notify AFTER INSERT OR UPDATE ON payments FOR EACH ROW
    EXECUTE FUNCTION checkout_invoice_changed_notify()`
] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
