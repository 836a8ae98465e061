import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { NullableDate } from "../../domain/Timestamps.ts"
import { stateKey, type WatchScope } from "./WatchScope.ts"

/** A processed block the watcher remembers: its height and hash (for reorg checks). */
export const BlockRef = Schema.Struct({ height: Schema.BigIntFromString, hash: Schema.String })
export type BlockRef = typeof BlockRef.Type

export const Cursor = Schema.Struct({
  height: Schema.BigIntFromString,
  hash: Schema.String,
  chainTime: Schema.Date
})
export type Cursor = typeof Cursor.Type

/** Evidence a watcher recorded from a block: its identity and where it was mined. */
export const ChainEvidence = Schema.Struct({
  paymentOptionId: Schema.String,
  transactionHash: Schema.String,
  outputIndex: Schema.Int,
  amountAtomic: Schema.BigIntFromString,
  confirmations: Schema.Int,
  destinationAddress: Schema.NullOr(Schema.String),
  observedAt: Schema.Date,
  blockHeight: Schema.BigIntFromString,
  blockHash: Schema.String
})
export type ChainEvidence = typeof ChainEvidence.Type

/** Which evidence of a network: its option and its identity. */
export const EvidenceRef = Schema.Struct({
  paymentOptionId: Schema.String,
  transactionHash: Schema.String,
  outputIndex: Schema.Int
})
export type EvidenceRef = typeof EvidenceRef.Type

/** Evidence seen only in the mempool so far, with no block yet. */
export const MempoolEvidence = EvidenceRef
export type MempoolEvidence = EvidenceRef

/** A deposit to an invoice's address that matches none of its options (wrong token, wrong network). */
export interface UnmatchedDeposit {
  readonly merchantId: string
  readonly invoiceId: string
  readonly network: string
  readonly assetCode: string
  readonly tokenContract: string
  readonly toAddress: string
  readonly transactionHash: string
  readonly outputIndex: number
  readonly amountAtomic: bigint
  readonly blockHeight: bigint
  readonly blockHash: string
  readonly chainTime: Date
  /** wrong_recipient: a Solana transfer carrying an option's reference to another recipient's token account. */
  readonly reason: "wrong_token" | "wrong_network" | "wrong_recipient"
}

/** Evidence that waits for another endpoint to corroborate it: at 0 confirmations until then (docs/chains.md). */
export const WaitingEvidence = Schema.Struct({
  paymentOptionId: Schema.String,
  transactionHash: Schema.String,
  outputIndex: Schema.Int,
  amountAtomic: Schema.BigIntFromString,
  confirmations: Schema.Int,
  destinationAddress: Schema.NullOr(Schema.String),
  observedAt: Schema.Date,
  /** Null for a mempool sighting. */
  blockHeight: Schema.NullOr(Schema.BigIntFromString),
  blockHash: Schema.NullOr(Schema.String),
  reporter: Schema.String,
  token: Schema.String,
  disputed: Schema.Boolean,
  since: Schema.Date,
  /** Set when the transfer pays a refund (then the other fields are the refund's transaction): null for a payment. */
  refundId: Schema.NullOr(Schema.String)
})
export type WaitingEvidence = typeof WaitingEvidence.Type

/** A transfer about to be recorded without corroboration: its identity, who reported it, and whether another denied it. */
export interface Uncorroborated {
  readonly transactionHash: string
  readonly outputIndex: number
  readonly reporter: string
  readonly token: string
  readonly disputed: boolean
}

/** How many of a network's valid payments and refunds' transfers wait for corroboration, how many of them are disputed, and since when the oldest. */
export const CorroborationBacklog = Schema.Struct({ waiting: Schema.Int, disputed: Schema.Int, since: NullableDate })
export type CorroborationBacklog = typeof CorroborationBacklog.Type

/** What a poll publishes: the processed cursor and the head it saw. */
export interface Progress {
  readonly cursor: Cursor
  readonly headHeight: bigint
  readonly headTime: Date | null
}

const KeyRequest = Schema.Struct({ key: Schema.String })
const KeyHeight = Schema.Struct({ key: Schema.String, height: Schema.BigIntFromString })
const ScopeRequest = Schema.Struct({ network: Schema.String, livemode: Schema.Boolean })
const ScopeHeight = Schema.Struct({ network: Schema.String, livemode: Schema.Boolean, height: Schema.BigIntFromString })
const ChainTime = Schema.Struct({ network: Schema.String, chainTime: NullableDate })

/**
 * The chain watchers' persistence, per watch scope (WatchScope.ts: a network's live or testnet
 * watcher): each scope's cursor and published progress, the hashes of
 * recently processed blocks, the evidence recorded from blocks (for confirmations and reorgs), and
 * unmatched deposits. SQL failures are defects here, at the repository edge.
 */
export class ChainRepo extends Context.Service<ChainRepo, {
  readonly cursor: (scope: WatchScope) => Effect.Effect<Cursor | undefined>
  /** Saves the cursor and the head seen, and clears the last error. */
  readonly saveProgress: (scope: WatchScope, progress: Progress) => Effect.Effect<void>
  readonly saveError: (scope: WatchScope, message: string) => Effect.Effect<void>
  /** What the watcher knows of its endpoints (EndpointsReport as JSON), for the dashboard and /metrics. */
  readonly saveEndpoints: (scope: WatchScope, report: string) => Effect.Effect<void>
  readonly rememberBlocks: (scope: WatchScope, blocks: ReadonlyArray<BlockRef>) => Effect.Effect<void>
  /** Remembered blocks below `height`, highest first. */
  readonly blocksBelow: (scope: WatchScope, height: bigint) => Effect.Effect<ReadonlyArray<BlockRef>>
  readonly forgetBlocksAbove: (scope: WatchScope, height: bigint) => Effect.Effect<void>
  readonly forgetBlocksBelow: (scope: WatchScope, height: bigint) => Effect.Effect<void>
  /** Valid evidence recorded from blocks above `height` (what a reorg to `height` orphans). */
  readonly evidenceAbove: (scope: WatchScope, height: bigint) => Effect.Effect<ReadonlyArray<ChainEvidence>>
  /** Valid evidence from blocks that has not reached its required confirmations. */
  readonly awaitingConfirmation: (scope: WatchScope) => Effect.Effect<ReadonlyArray<ChainEvidence>>
  /**
   * Evidence a reorganisation invalidated whose invoice waits to be judged (see PaymentEvidence.settleReorg)
   * and whose option's required confirmations beyond the reorg point are processed at `height`.
   */
  readonly reorgsSettledAt: (scope: WatchScope, height: bigint) => Effect.Effect<ReadonlyArray<EvidenceRef>>
  /** Valid evidence seen in the mempool and not mined since (to check for replacement or eviction). */
  readonly inMempool: (scope: WatchScope) => Effect.Effect<ReadonlyArray<MempoolEvidence>>
  readonly recordUnmatched: (deposit: UnmatchedDeposit) => Effect.Effect<void>
  readonly invalidateUnmatchedAbove: (scope: WatchScope, height: bigint, reason: string) => Effect.Effect<number>
  /** Marks a transfer as waiting for corroboration (before its evidence is recorded, so it never counts confirmations). */
  readonly markUncorroborated: (scope: WatchScope, transfer: Uncorroborated) => Effect.Effect<void>
  /** A majority corroborated it (or denied it): it no longer waits. */
  readonly clearUncorroborated: (scope: WatchScope, transactionHash: string, outputIndex: number) => Effect.Effect<void>
  /** The valid evidence, and the refunds' transfers, that wait for corroboration (oldest first). */
  readonly uncorroborated: (scope: WatchScope) => Effect.Effect<ReadonlyArray<WaitingEvidence>>
  readonly corroborationBacklog: (scope: WatchScope) => Effect.Effect<CorroborationBacklog>
  /** Which of these transactions' outputs are known already (payments, unmatched deposits, refunds' transfers), as `hash:index`. */
  readonly knownTransfers: (scope: WatchScope, transactionHashes: ReadonlyArray<string>) => Effect.Effect<ReadonlySet<string>>
  /** The chain time each of `networks` has been processed up to (null: not yet). */
  readonly chainTimes: (networks: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<typeof ChainTime.Type>>
}>()("Chains/ChainRepo") {
  static readonly layer = Layer.effect(
    ChainRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const q = chainQueries(sql)
      return { ...progressMethods(sql, q), ...evidenceMethods(sql, q) }
    })
  )
}

type ChainRepoShape = ChainRepo["Service"]

/** The repository's reads, as schema-checked queries. */
const chainQueries = (sql: SqlClient.SqlClient) => {
  // The invoices of the scope's mode only: a testnet watcher's evidence is that of test invoices.
  const ofMode = (livemode: boolean, column = sql`invoice_id`) => sql`${column} IN (SELECT id FROM invoices WHERE livemode = ${livemode})`
  const evidenceColumns = sql`payment_option_id, transaction_hash, output_index, amount_atomic::text AS amount_atomic,
    confirmations, destination_address, observed_at, block_height::text AS block_height, block_hash`

  const findCursor = SqlSchema.findOneOption({
    Request: KeyRequest,
    Result: Cursor,
    execute: ({ key }) =>
      sql`SELECT processed_height::text AS height, processed_hash AS hash, chain_time FROM chain_cursors
        WHERE network = ${key} AND processed_height IS NOT NULL`
  })
  const findBlocksBelow = SqlSchema.findAll({
    Request: KeyHeight,
    Result: BlockRef,
    execute: ({ key, height }) =>
      // Qualified: a bare `height` would name the text alias above and sort "5" above "28".
      sql`SELECT height::text AS height, hash FROM chain_blocks WHERE network = ${key} AND height < ${height}
        ORDER BY chain_blocks.height DESC`
  })
  const findEvidenceAbove = SqlSchema.findAll({
    Request: ScopeHeight,
    Result: ChainEvidence,
    execute: ({ network, livemode, height }) =>
      sql`SELECT ${evidenceColumns} FROM payments
        WHERE network = ${network} AND block_height > ${height} AND invalidated_at IS NULL AND ${ofMode(livemode)} ORDER BY payments.block_height`
  })
  const findAwaiting = SqlSchema.findAll({
    Request: ScopeRequest,
    Result: ChainEvidence,
    execute: ({ network, livemode }) =>
      sql`SELECT ${evidenceColumns} FROM payments
        WHERE network = ${network} AND block_height IS NOT NULL AND confirmed_at IS NULL AND invalidated_at IS NULL AND ${ofMode(livemode)}`
  })
  const findInMempool = SqlSchema.findAll({
    Request: ScopeRequest,
    Result: MempoolEvidence,
    execute: ({ network, livemode }) =>
      sql`SELECT payment_option_id, transaction_hash, output_index FROM payments
        WHERE network = ${network} AND seen_in_mempool AND block_height IS NULL AND invalidated_at IS NULL AND ${ofMode(livemode)}`
  })
  const findReorgsSettled = SqlSchema.findAll({
    Request: ScopeHeight,
    Result: EvidenceRef,
    execute: ({ network, livemode, height }) =>
      sql`SELECT p.payment_option_id, p.transaction_hash, p.output_index FROM payments p
        JOIN payment_options o ON o.id = p.payment_option_id
        WHERE p.network = ${network} AND p.reorg_point IS NOT NULL AND p.reorg_point + o.required_confirmations <= ${height}
          AND ${ofMode(livemode, sql`p.invoice_id`)}`
  })
  // Payments, and refunds' transfers (sent or completed, bound to the transaction) that wait.
  const waitingRows = (network: string, livemode: boolean) =>
    sql`SELECT p.payment_option_id, p.transaction_hash, p.output_index, p.amount_atomic::text AS amount_atomic, p.confirmations,
        p.destination_address, p.observed_at, p.block_height::text AS block_height, p.block_hash, u.reporter, u.token, u.disputed, u.since,
        NULL::text AS refund_id
      FROM uncorroborated_transfers u JOIN payments p
        ON p.network = u.network AND p.transaction_hash = u.transaction_hash AND p.output_index = u.output_index
      WHERE u.network = ${network} AND p.invalidated_at IS NULL AND ${ofMode(livemode, sql`p.invoice_id`)}
      UNION ALL
      SELECT r.payment_option_id, r.transaction_hash, r.output_index, r.amount_atomic::text AS amount_atomic, r.confirmations,
        r.refund_address AS destination_address, coalesce(r.sent_at, r.updated_at) AS observed_at, r.block_height::text AS block_height,
        r.block_hash, u.reporter, u.token, u.disputed, u.since, r.id::text AS refund_id
      FROM uncorroborated_transfers u JOIN refunds r
        ON r.network = u.network AND r.transaction_hash = u.transaction_hash AND r.output_index = u.output_index
      WHERE u.network = ${network} AND r.status IN ('sent', 'completed') AND ${ofMode(livemode, sql`r.invoice_id`)}`
  const findWaiting = SqlSchema.findAll({
    Request: ScopeRequest,
    Result: WaitingEvidence,
    execute: ({ network, livemode }) => sql`SELECT * FROM (${waitingRows(network, livemode)}) AS waiting ORDER BY waiting.since`
  })
  const findBacklog = SqlSchema.findOne({
    Request: ScopeRequest,
    Result: CorroborationBacklog,
    execute: ({ network, livemode }) =>
      sql`SELECT count(*)::int AS waiting, count(*) FILTER (WHERE waiting.disputed)::int AS disputed, min(waiting.since) AS since
        FROM (${waitingRows(network, livemode)}) AS waiting`
  })
  const findChainTimes = SqlSchema.findAll({
    Request: Schema.Struct({ networks: Schema.Array(Schema.String) }),
    Result: ChainTime,
    execute: ({ networks }) => sql`SELECT network, chain_time FROM chain_cursors WHERE ${sql.in("network", networks)}`
  })

  return { ofMode, findCursor, findBlocksBelow, findEvidenceAbove, findAwaiting, findInMempool, findReorgsSettled, findWaiting, findBacklog, findChainTimes }
}
type ChainQueries = ReturnType<typeof chainQueries>

type ProgressMethods = "cursor" | "saveProgress" | "saveError" | "saveEndpoints" | "rememberBlocks" | "blocksBelow" | "forgetBlocksAbove" | "forgetBlocksBelow" | "chainTimes"

/** Each network's cursor, progress, endpoints and remembered blocks. */
const progressMethods = (sql: SqlClient.SqlClient, q: ChainQueries): Pick<ChainRepoShape, ProgressMethods> => ({
  cursor: Effect.fn("ChainRepo.cursor")(function*(scope) {
    return Option.getOrUndefined(yield* q.findCursor({ key: stateKey(scope) }))
  }, Effect.orDie),
  saveProgress: Effect.fn("ChainRepo.saveProgress")(function*(scope, { cursor, headHeight, headTime }) {
    const network = stateKey(scope)
    yield* sql`INSERT INTO chain_cursors (network, processed_height, processed_hash, chain_time, head_height, head_time, updated_at)
        VALUES (${network}, ${cursor.height.toString()}, ${cursor.hash}, ${cursor.chainTime}, ${headHeight.toString()}, ${headTime}, now())
        ON CONFLICT (network) DO UPDATE SET processed_height = EXCLUDED.processed_height,
          processed_hash = EXCLUDED.processed_hash, chain_time = EXCLUDED.chain_time, head_height = EXCLUDED.head_height,
          head_time = EXCLUDED.head_time, last_error = NULL, last_error_at = NULL, updated_at = now()`
  }, Effect.orDie),
  saveError: Effect.fn("ChainRepo.saveError")(function*(scope, message) {
    const network = stateKey(scope)
    yield* sql`INSERT INTO chain_cursors (network, last_error, last_error_at, updated_at) VALUES (${network}, ${message.slice(0, 1000)}, now(), now())
        ON CONFLICT (network) DO UPDATE SET last_error = EXCLUDED.last_error, last_error_at = now(), updated_at = now()`
  }, Effect.orDie),
  saveEndpoints: Effect.fn("ChainRepo.saveEndpoints")(function*(scope, report) {
    const network = stateKey(scope)
    yield* sql`INSERT INTO chain_cursors (network, endpoints, updated_at) VALUES (${network}, ${report}, now())
        ON CONFLICT (network) DO UPDATE SET endpoints = EXCLUDED.endpoints`
  }, Effect.orDie),
  rememberBlocks: Effect.fn("ChainRepo.rememberBlocks")(function*(scope, blocks) {
    if (blocks.length === 0) return
    const network = stateKey(scope)
    yield* sql`INSERT INTO chain_blocks (network, height, hash)
        SELECT ${network}, (b->>'height')::bigint, b->>'hash'
        FROM json_array_elements(${JSON.stringify(blocks.map((block) => ({ height: block.height.toString(), hash: block.hash })))}::json) AS b
        ON CONFLICT (network, height) DO UPDATE SET hash = EXCLUDED.hash`
  }, Effect.orDie),
  blocksBelow: Effect.fn("ChainRepo.blocksBelow")(function*(scope, height) {
    return yield* q.findBlocksBelow({ key: stateKey(scope), height })
  }, Effect.orDie),
  forgetBlocksAbove: Effect.fn("ChainRepo.forgetBlocksAbove")(function*(scope, height) {
    yield* sql`DELETE FROM chain_blocks WHERE network = ${stateKey(scope)} AND height > ${height.toString()}`
  }, Effect.orDie),
  forgetBlocksBelow: Effect.fn("ChainRepo.forgetBlocksBelow")(function*(scope, height) {
    yield* sql`DELETE FROM chain_blocks WHERE network = ${stateKey(scope)} AND height < ${height.toString()}`
  }, Effect.orDie),
  chainTimes: Effect.fn("ChainRepo.chainTimes")(function*(networks) {
    if (networks.length === 0) return []
    return yield* q.findChainTimes({ networks })
  }, Effect.orDie)
})

/** Evidence recorded from blocks, unmatched deposits and transfers waiting for corroboration. */
const evidenceMethods = (sql: SqlClient.SqlClient, q: ChainQueries): Omit<ChainRepoShape, ProgressMethods> => ({
  evidenceAbove: Effect.fn("ChainRepo.evidenceAbove")(function*(scope, height) {
    return yield* q.findEvidenceAbove({ ...scope, height })
  }, Effect.orDie),
  awaitingConfirmation: Effect.fn("ChainRepo.awaitingConfirmation")(function*(scope) {
    return yield* q.findAwaiting(scope)
  }, Effect.orDie),
  reorgsSettledAt: Effect.fn("ChainRepo.reorgsSettledAt")(function*(scope, height) {
    return yield* q.findReorgsSettled({ ...scope, height })
  }, Effect.orDie),
  inMempool: Effect.fn("ChainRepo.inMempool")(function*(scope) {
    return yield* q.findInMempool(scope)
  }, Effect.orDie),
  recordUnmatched: Effect.fn("ChainRepo.recordUnmatched")(function*(deposit) {
    yield* sql`INSERT INTO unmatched_deposits ${
      sql.insert({
        id: crypto.randomUUID(),
        merchant_id: deposit.merchantId,
        invoice_id: deposit.invoiceId,
        network: deposit.network,
        asset_code: deposit.assetCode,
        token_contract: deposit.tokenContract,
        to_address: deposit.toAddress,
        transaction_hash: deposit.transactionHash,
        output_index: deposit.outputIndex,
        amount_atomic: deposit.amountAtomic.toString(),
        block_height: deposit.blockHeight.toString(),
        block_hash: deposit.blockHash,
        chain_time: deposit.chainTime,
        reason: deposit.reason,
        detected_at: new Date()
      })
    }
        ON CONFLICT (network, transaction_hash, output_index) DO UPDATE SET block_height = EXCLUDED.block_height,
          block_hash = EXCLUDED.block_hash, chain_time = EXCLUDED.chain_time, invalidated_at = NULL, invalidation_reason = NULL`
  }, Effect.orDie),
  invalidateUnmatchedAbove: Effect.fn("ChainRepo.invalidateUnmatchedAbove")(function*(scope, height, reason) {
    const rows = yield* sql`UPDATE unmatched_deposits SET invalidated_at = now(), invalidation_reason = ${reason}
        WHERE network = ${scope.network} AND block_height > ${height.toString()} AND invalidated_at IS NULL AND ${q.ofMode(scope.livemode)} RETURNING 1`
    return rows.length
  }, Effect.orDie),
  // Rows name the real network: transaction hashes of a testnet never equal a mainnet's (EIP-155, distinct chains).
  markUncorroborated: Effect.fn("ChainRepo.markUncorroborated")(function*({ network }, transfer) {
    yield* sql`INSERT INTO uncorroborated_transfers (network, transaction_hash, output_index, reporter, token, disputed, since)
        VALUES (${network}, ${transfer.transactionHash}, ${transfer.outputIndex}, ${transfer.reporter}, ${transfer.token}, ${transfer.disputed}, now())
        ON CONFLICT (network, transaction_hash, output_index) DO UPDATE SET disputed = EXCLUDED.disputed`
  }, Effect.orDie),
  clearUncorroborated: Effect.fn("ChainRepo.clearUncorroborated")(function*({ network }, transactionHash, outputIndex) {
    yield* sql`DELETE FROM uncorroborated_transfers WHERE network = ${network} AND transaction_hash = ${transactionHash} AND output_index = ${outputIndex}`
  }, Effect.orDie),
  uncorroborated: Effect.fn("ChainRepo.uncorroborated")(function*(scope) {
    return yield* q.findWaiting(scope)
  }, Effect.orDie),
  corroborationBacklog: Effect.fn("ChainRepo.corroborationBacklog")(function*(scope) {
    return yield* q.findBacklog(scope)
  }, Effect.orDie),
  knownTransfers: Effect.fn("ChainRepo.knownTransfers")(function*({ network, livemode }, transactionHashes) {
    if (transactionHashes.length === 0) return new Set<string>()
    const mode = q.ofMode(livemode)
    const rows = yield* sql<{ transactionHash: string; outputIndex: number }>`SELECT transaction_hash, output_index FROM payments
        WHERE network = ${network} AND ${sql.in("transaction_hash", transactionHashes)} AND ${mode}
        UNION SELECT transaction_hash, output_index FROM unmatched_deposits WHERE network = ${network} AND ${sql.in("transaction_hash", transactionHashes)} AND ${mode}
        UNION SELECT transaction_hash, output_index FROM refunds WHERE network = ${network} AND ${sql.in("transaction_hash", transactionHashes)} AND ${mode}`
    return new Set(rows.map((row) => `${row.transactionHash}:${row.outputIndex}`))
  }, Effect.orDie)
})
