import { Effect } from "effect"
import { SqlClient } from "effect/sql"

// Test mode (issue #55): checkout settings and payment methods exist once per mode, so that test
// payment methods can name testnet wallets. Existing rows are the live ones.
const statements = [
  `ALTER TABLE checkout_settings ADD COLUMN livemode boolean NOT NULL DEFAULT true`,
  `ALTER TABLE checkout_settings DROP CONSTRAINT checkout_settings_pkey`,
  `ALTER TABLE checkout_settings ADD PRIMARY KEY (merchant_id, livemode)`,
  `ALTER TABLE payment_methods ADD COLUMN livemode boolean NOT NULL DEFAULT true`,
  `ALTER TABLE payment_methods DROP CONSTRAINT payment_methods_merchant_id_network_asset_code_rail_type_key`,
  `ALTER TABLE payment_methods ADD CONSTRAINT payment_methods_mode_method_key UNIQUE (merchant_id, livemode, network, asset_code, rail_type)`
] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
