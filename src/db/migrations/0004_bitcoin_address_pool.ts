import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE TABLE bitcoin_address_pool (
    xpub text NOT NULL,
    derivation_index bigint NOT NULL,
    address text NOT NULL UNIQUE,
    assigned_at timestamptz,
    PRIMARY KEY (xpub, derivation_index)
  )`)
  yield* sql.unsafe(`CREATE INDEX bitcoin_address_pool_available ON bitcoin_address_pool (xpub, derivation_index) WHERE assigned_at IS NULL`)
})
