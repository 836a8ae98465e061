import { Migrator } from "effect/sql"
import migration0001 from "./migrations/0001_core_tables.ts"
import migration0002 from "./migrations/0002_sessions_and_secrets.ts"
import migration0003 from "./migrations/0003_rate_limits.ts"
import migration0004 from "./migrations/0004_bitcoin_address_pool.ts"
import migration0005 from "./migrations/0005_webhooks.ts"
import migration0006 from "./migrations/0006_chain_observation.ts"
import migration0007 from "./migrations/0007_forwarder_sweeps.ts"
import migration0008 from "./migrations/0008_mempool_evidence.ts"
import migration0009 from "./migrations/0009_solana_watcher.ts"
import migration0012 from "./migrations/0012_outbox_notify.ts"
import migration0013 from "./migrations/0013_attempt_url.ts"
import migration0014 from "./migrations/0014_idempotency_lease.ts"
import migration0015 from "./migrations/0015_reorg_settlement.ts"
import migration0016 from "./migrations/0016_quote_sources.ts"
import migration0017 from "./migrations/0017_chain_endpoints.ts"
import migration0018 from "./migrations/0018_refunds.ts"
import migration0019 from "./migrations/0019_invoice_change_notify.ts"
import migration0020 from "./migrations/0020_refund_address_note.ts"

/** Every migration of the schema, by id; ids only grow (the migrator runs ids above the last applied). */
export const migrations = Migrator.fromRecord({
  "0001_core_tables": migration0001,
  "0002_sessions_and_secrets": migration0002,
  "0003_rate_limits": migration0003,
  "0004_bitcoin_address_pool": migration0004,
  "0005_webhooks": migration0005,
  "0006_chain_observation": migration0006,
  "0007_forwarder_sweeps": migration0007,
  "0008_mempool_evidence": migration0008,
  "0009_solana_watcher": migration0009,
  "0012_outbox_notify": migration0012,
  // 0010 and 0011 were never used; ids only grow (the migrator runs ids above the last applied).
  "0013_attempt_url": migration0013,
  "0014_idempotency_lease": migration0014,
  "0015_reorg_settlement": migration0015,
  "0016_quote_sources": migration0016,
  "0017_chain_endpoints": migration0017,
  "0018_refunds": migration0018,
  "0019_invoice_change_notify": migration0019,
  "0020_refund_address_note": migration0020
})

export const runMigrations = Migrator.make({})({ loader: migrations })
