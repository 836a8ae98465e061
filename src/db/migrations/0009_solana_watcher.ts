import { Effect } from "effect"
import { SqlClient } from "effect/sql"

const statements = [
  // The Solana watcher pages each watched token account's signatures from the newest one it has processed.
  `CREATE TABLE solana_account_cursors (
    token_account text PRIMARY KEY,
    last_signature text NOT NULL,
    last_slot bigint NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
  )`,
  // Every transaction that carried a watched reference: its memo and what it was read as (never lost, shown in logs and queries).
  `CREATE TABLE solana_transfers (
    signature text NOT NULL,
    token_account text NOT NULL,
    slot bigint NOT NULL,
    block_time timestamptz NOT NULL,
    reference text NOT NULL,
    payment_option_id uuid NOT NULL REFERENCES payment_options(id),
    mint text NOT NULL,
    amount_atomic numeric(78, 0) NOT NULL,
    memo text,
    outcome text NOT NULL,
    observed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (signature, token_account)
  )`,
  `CREATE INDEX solana_transfers_by_option ON solana_transfers (payment_option_id)`
] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
