import { Effect } from "effect"
import { SqlClient } from "effect/sql"

// Test mode (issue #55): webhook settings and their secret exist once per mode, and each delivery
// is of its invoice's mode (a test event goes only to the test URL, signed with the test secret).
const statements = [
  `ALTER TABLE webhook_settings ADD COLUMN livemode boolean NOT NULL DEFAULT true`,
  `ALTER TABLE webhook_settings DROP CONSTRAINT webhook_settings_pkey`,
  `ALTER TABLE webhook_settings ADD PRIMARY KEY (merchant_id, livemode)`,
  `ALTER TABLE webhook_deliveries ADD COLUMN livemode boolean NOT NULL DEFAULT true`
] as const

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
