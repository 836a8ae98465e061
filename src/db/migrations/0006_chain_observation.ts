import { Effect } from "effect"
import { SqlClient } from "effect/sql"

const statements = [
  // One row per watched network: its persisted cursor and the state it publishes (lag, errors).
  `CREATE TABLE chain_cursors (
    network text PRIMARY KEY,
    processed_height bigint,
    processed_hash text,
    chain_time timestamptz,
    head_height bigint,
    head_time timestamptz,
    last_error text,
    last_error_at timestamptz,
    updated_at timestamptz NOT NULL DEFAULT now()
  )`,
  // Hashes of recently processed blocks (the cursor's and every block that carried a match), for reorg checks.
  `CREATE TABLE chain_blocks (
    network text NOT NULL,
    height bigint NOT NULL,
    hash text NOT NULL,
    PRIMARY KEY (network, height)
  )`,
  `CREATE TABLE unmatched_deposits (
    id uuid PRIMARY KEY,
    merchant_id uuid NOT NULL REFERENCES merchants(id),
    invoice_id uuid NOT NULL REFERENCES invoices(id),
    network text NOT NULL,
    asset_code text NOT NULL,
    token_contract text NOT NULL,
    to_address text NOT NULL,
    transaction_hash text NOT NULL,
    output_index integer NOT NULL,
    amount_atomic numeric(78, 0) NOT NULL,
    block_height bigint,
    block_hash text,
    chain_time timestamptz NOT NULL,
    reason text NOT NULL,
    detected_at timestamptz NOT NULL,
    invalidated_at timestamptz,
    invalidation_reason text,
    UNIQUE (network, transaction_hash, output_index)
  )`,
  `CREATE INDEX unmatched_deposits_by_merchant ON unmatched_deposits (merchant_id, detected_at DESC, id)`,
  `CREATE INDEX unmatched_deposits_by_invoice ON unmatched_deposits (invoice_id, detected_at)`,
  `ALTER TABLE payments ADD COLUMN block_height bigint`,
  `ALTER TABLE payments ADD COLUMN block_hash text`,
  `CREATE INDEX payments_on_chain ON payments (network, block_height) WHERE block_height IS NOT NULL AND invalidated_at IS NULL`,
  `CREATE INDEX payments_awaiting_confirmation ON payments (network) WHERE block_height IS NOT NULL AND confirmed_at IS NULL AND invalidated_at IS NULL`,
  // A watcher learns of new options incrementally: every option gets a sequence number when inserted.
  `ALTER TABLE payment_options ADD COLUMN watch_seq bigserial`,
  `CREATE INDEX payment_options_by_watch_seq ON payment_options (watch_seq)`
] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
