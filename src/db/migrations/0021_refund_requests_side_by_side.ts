import { Effect } from "effect"
import { SqlClient } from "effect/sql"

const statements = [
  // Who paid (issue #52): the sender the watcher saw (EVM the Transfer's `from`, Solana the owner of
  // the token account that paid); null for bitcoin (inputs need not be one address) and older rows.
  `ALTER TABLE payments ADD COLUMN payer_address text`,
  // Requests of one option stand side by side while pending; the merchant chooses one.
  `ALTER TABLE refunds DROP CONSTRAINT refunds_invoice_id_payment_option_id_key`,
  `CREATE INDEX refunds_by_option ON refunds (invoice_id, payment_option_id)`,
  `ALTER TABLE refunds ADD COLUMN verified boolean NOT NULL DEFAULT false`,
  `ALTER TABLE refunds ADD COLUMN paid_from text`,
  `ALTER TABLE refunds ADD COLUMN chosen_at timestamptz`
] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
