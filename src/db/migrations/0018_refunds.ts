import { Effect } from "effect"
import { SqlClient } from "effect/sql"

const statements = [
  // Refunds without custody: what the payer asked to be sent back from one payment option, and the
  // transaction (from any sender, usually the merchant's wallet) the watchers saw paying it.
  // One request per (invoice, option), ever.
  `CREATE TABLE refunds (
    id uuid PRIMARY KEY,
    merchant_id uuid NOT NULL REFERENCES merchants(id),
    invoice_id uuid NOT NULL REFERENCES invoices(id),
    payment_option_id uuid NOT NULL REFERENCES payment_options(id),
    network text NOT NULL,
    asset_code text NOT NULL,
    token_contract text,
    decimals integer NOT NULL,
    amount_atomic numeric(78, 0) NOT NULL CHECK (amount_atomic > 0),
    refund_address text NOT NULL,
    watch_key text NOT NULL,
    reference text,
    payer_email text,
    reason text NOT NULL CHECK (reason IN ('overpayment', 'close_unpaid')),
    status text NOT NULL CHECK (status IN ('requested', 'sent', 'completed', 'rejected')),
    required_confirmations integer NOT NULL,
    transaction_hash text,
    output_index integer,
    block_height bigint,
    block_hash text,
    confirmations integer NOT NULL DEFAULT 0,
    rejection_note text,
    requested_at timestamptz NOT NULL,
    sent_at timestamptz,
    completed_at timestamptz,
    rejected_at timestamptz,
    updated_at timestamptz NOT NULL,
    UNIQUE (invoice_id, payment_option_id)
  )`,
  `CREATE INDEX refunds_watched ON refunds (network, status) WHERE status IN ('requested', 'sent')`,
  `CREATE INDEX refunds_by_merchant ON refunds (merchant_id, requested_at DESC, id DESC)`,
  `ALTER TABLE outbox ADD COLUMN refund_id uuid REFERENCES refunds(id)`,
  `ALTER TABLE webhook_deliveries ADD COLUMN refund_id uuid`
] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
