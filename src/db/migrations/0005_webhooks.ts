import { Effect } from "effect"
import { SqlClient } from "effect/sql"

const statements = [
  `CREATE TABLE webhook_settings (
    merchant_id uuid PRIMARY KEY REFERENCES merchants(id),
    url text,
    enabled_events jsonb NOT NULL,
    secret_ciphertext text,
    secret_created_at timestamptz,
    updated_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE TABLE webhook_deliveries (
    id uuid PRIMARY KEY,
    outbox_id bigint UNIQUE,
    merchant_id uuid NOT NULL REFERENCES merchants(id),
    invoice_id uuid NOT NULL REFERENCES invoices(id),
    event text NOT NULL,
    url text NOT NULL,
    status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempt_count integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,
    lease_until timestamptz,
    last_status_code integer,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`,
  `CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
  `CREATE INDEX webhook_deliveries_by_merchant ON webhook_deliveries (merchant_id, created_at DESC, id DESC)`,
  `CREATE TABLE webhook_attempts (
    id bigserial PRIMARY KEY,
    delivery_id uuid NOT NULL REFERENCES webhook_deliveries(id),
    attempted_at timestamptz NOT NULL,
    status_code integer,
    duration_ms integer NOT NULL,
    error text,
    response_excerpt text,
    manual boolean NOT NULL DEFAULT false
  )`,
  `CREATE INDEX webhook_attempts_by_delivery ON webhook_attempts (delivery_id, id)`
] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
