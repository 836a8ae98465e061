import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** sql-pg always uses the extended protocol: one statement per query. */
const statements = [
  `CREATE TABLE merchants (
    id uuid PRIMARY KEY,
    email text NOT NULL UNIQUE,
    password_hash text,
    status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
    billing_status text NOT NULL DEFAULT 'active' CHECK (billing_status IN ('active', 'blocked')),
    is_demo boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE TABLE api_keys (
    id uuid PRIMARY KEY,
    merchant_id uuid NOT NULL REFERENCES merchants(id),
    key_hash text NOT NULL UNIQUE,
    key_prefix text NOT NULL,
    label text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
  )`,
  `CREATE INDEX api_keys_active_by_merchant ON api_keys (merchant_id) WHERE revoked_at IS NULL`,
  `CREATE TABLE checkout_settings (
    merchant_id uuid PRIMARY KEY REFERENCES merchants(id),
    issued_by text,
    timing_mode text NOT NULL CHECK (timing_mode IN ('immediate', 'due_date')),
    expires_after_minutes integer,
    due_after_days integer,
    grace_period_days integer,
    updated_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE TABLE payment_methods (
    id uuid PRIMARY KEY,
    merchant_id uuid NOT NULL REFERENCES merchants(id),
    network text NOT NULL,
    asset_code text NOT NULL,
    rail_type text NOT NULL CHECK (rail_type IN ('wallet_contract', 'address_transfer')),
    enabled boolean NOT NULL DEFAULT true,
    is_default boolean NOT NULL DEFAULT false,
    position integer NOT NULL DEFAULT 0,
    recipient_address text,
    xpub text,
    UNIQUE (merchant_id, network, asset_code, rail_type)
  )`,
  `CREATE TABLE derivation_counters (
    xpub text PRIMARY KEY,
    next_index bigint NOT NULL
  )`,
  `CREATE TABLE invoices (
    id uuid PRIMARY KEY,
    merchant_id uuid NOT NULL REFERENCES merchants(id),
    amount_micros bigint NOT NULL CHECK (amount_micros > 0),
    status text NOT NULL,
    timing_mode text NOT NULL,
    expires_after_minutes integer,
    due_after_days integer,
    grace_period_days integer,
    due_at timestamptz,
    payable_until_at timestamptz NOT NULL,
    product_name text,
    issued_by text,
    bill_to text,
    redirect_url text,
    merchant_reference text,
    customer_id text,
    customer_email text,
    metadata jsonb,
    default_payment_option_id uuid,
    last_payment_option_id uuid,
    last_transaction_hash text,
    received_micros bigint NOT NULL DEFAULT 0 CHECK (received_micros >= 0),
    confirmed_micros bigint NOT NULL DEFAULT 0 CHECK (confirmed_micros >= 0),
    confirmations integer NOT NULL DEFAULT 0,
    payment_detected_at timestamptz,
    confirmed_at timestamptz,
    paid_out_of_band_at timestamptz,
    paid_out_of_band_note text,
    voided_at timestamptz,
    exception_type text,
    exception_status text,
    exception_action text,
    exception_note text,
    exception_closed_at timestamptz,
    created_at timestamptz NOT NULL,
    last_payment_observed_at timestamptz
  )`,
  `CREATE INDEX invoices_by_merchant_created ON invoices (merchant_id, created_at DESC, id)`,
  `CREATE INDEX invoices_due_for_expiry ON invoices (payable_until_at) WHERE status IN ('awaiting_payment', 'partially_paid')`,
  `CREATE TABLE payment_options (
    id uuid PRIMARY KEY,
    invoice_id uuid NOT NULL REFERENCES invoices(id),
    position integer NOT NULL,
    rail_type text NOT NULL,
    asset_code text NOT NULL,
    network text NOT NULL,
    token_contract text,
    decimals integer NOT NULL,
    quoted_atomic numeric(78, 0) NOT NULL CHECK (quoted_atomic > 0),
    quote_rate text NOT NULL,
    destination_address text,
    payment_uri text,
    qr_code text,
    status text NOT NULL DEFAULT 'active',
    is_default boolean NOT NULL,
    option_payload jsonb,
    required_confirmations integer NOT NULL,
    reference text UNIQUE,
    derivation_index bigint
  )`,
  `CREATE INDEX payment_options_by_invoice ON payment_options (invoice_id, position)`,
  `CREATE UNIQUE INDEX payment_options_unique_destination ON payment_options (network, destination_address) WHERE destination_address IS NOT NULL AND rail_type = 'address_transfer' AND network <> 'solana'`,
  `CREATE TABLE payments (
    id uuid PRIMARY KEY,
    invoice_id uuid NOT NULL REFERENCES invoices(id),
    payment_option_id uuid NOT NULL REFERENCES payment_options(id),
    asset_code text NOT NULL,
    network text NOT NULL,
    destination_address text,
    transaction_hash text NOT NULL,
    output_index integer NOT NULL,
    decimals integer NOT NULL,
    amount_atomic numeric(78, 0) NOT NULL CHECK (amount_atomic > 0),
    observed_total_atomic numeric(78, 0) NOT NULL,
    usd_micros bigint NOT NULL CHECK (usd_micros >= 0),
    confirmations integer NOT NULL DEFAULT 0,
    late boolean NOT NULL,
    observed_at timestamptz NOT NULL,
    confirmed_at timestamptz,
    invalidated_at timestamptz,
    invalidation_reason text,
    UNIQUE (network, transaction_hash, output_index)
  )`,
  `CREATE INDEX payments_by_invoice ON payments (invoice_id, observed_at)`,
  `CREATE TABLE outbox (
    id bigserial PRIMARY KEY,
    invoice_id uuid NOT NULL REFERENCES invoices(id),
    merchant_id uuid NOT NULL REFERENCES merchants(id),
    event text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    dispatched_at timestamptz
  )`,
  `CREATE INDEX outbox_pending ON outbox (id) WHERE dispatched_at IS NULL`,
  `CREATE TABLE idempotency_keys (
    merchant_id uuid NOT NULL REFERENCES merchants(id),
    scope text NOT NULL,
    key text NOT NULL,
    request_hash text NOT NULL,
    state text NOT NULL CHECK (state IN ('running', 'done')),
    response_status integer,
    response_body text,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, scope, key)
  )`
] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
