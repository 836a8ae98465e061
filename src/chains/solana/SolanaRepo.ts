import { Effect, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"

/** The newest signature of a token account the watcher has processed, and its slot. */
export const AccountCursor = Schema.Struct({ signature: Schema.String, slot: Schema.BigIntFromString })
export type AccountCursor = typeof AccountCursor.Type

/** A transfer that carried a watched reference, as the watcher read it (its memo included). */
export interface ObservedTransfer {
  readonly signature: string
  readonly tokenAccount: string
  readonly slot: bigint
  readonly blockTime: Date
  readonly reference: string
  readonly paymentOptionId: string
  readonly mint: string
  readonly amountAtomic: bigint
  readonly memo: string | null
  readonly outcome: "evidence" | "wrong_token" | "wrong_recipient" | "refused"
}

/**
 * The Solana watcher's own persistence: per-account signature cursors and the transfers it read.
 * The devnet watcher's (`livemode` false) account cursors are its own (`test:<account>`): without a
 * devnet mint configured, test options name the live mint, and so the same token account.
 * SQL failures are defects.
 */
export const makeSolanaRepo = (livemode: boolean) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const keyOf = (tokenAccount: string) => (livemode ? tokenAccount : `test:${tokenAccount}`)
    const findCursor = SqlSchema.findOneOption({
      Request: Schema.Struct({ tokenAccount: Schema.String }),
      Result: AccountCursor,
      execute: ({ tokenAccount }) => sql`SELECT last_signature AS signature, last_slot::text AS slot FROM solana_account_cursors WHERE token_account = ${keyOf(tokenAccount)}`
    })
    return {
      cursor: Effect.fn("SolanaRepo.cursor")(function*(tokenAccount: string) {
        return Option.getOrUndefined(yield* findCursor({ tokenAccount }))
      }, Effect.orDie),
      saveCursor: Effect.fn("SolanaRepo.saveCursor")(function*(tokenAccount: string, cursor: AccountCursor) {
        yield* sql`INSERT INTO solana_account_cursors (token_account, last_signature, last_slot, updated_at)
        VALUES (${keyOf(tokenAccount)}, ${cursor.signature}, ${cursor.slot.toString()}, now())
        ON CONFLICT (token_account) DO UPDATE SET last_signature = EXCLUDED.last_signature, last_slot = EXCLUDED.last_slot,
          updated_at = now()`
      }, Effect.orDie),
      recordTransfer: Effect.fn("SolanaRepo.recordTransfer")(function*(transfer: ObservedTransfer) {
        yield* sql`INSERT INTO solana_transfers ${
          sql.insert({
            signature: transfer.signature,
            token_account: transfer.tokenAccount,
            slot: transfer.slot.toString(),
            block_time: transfer.blockTime,
            reference: transfer.reference,
            payment_option_id: transfer.paymentOptionId,
            mint: transfer.mint,
            amount_atomic: transfer.amountAtomic.toString(),
            memo: transfer.memo,
            outcome: transfer.outcome
          })
        } ON CONFLICT (signature, token_account) DO UPDATE SET outcome = EXCLUDED.outcome, slot = EXCLUDED.slot`
      }, Effect.orDie),
      /** Unmatched deposits of a transaction that left the chain. */
      invalidateUnmatched: Effect.fn("SolanaRepo.invalidateUnmatched")(function*(signature: string, reason: string) {
        yield* sql`UPDATE unmatched_deposits SET invalidated_at = now(), invalidation_reason = ${reason}
        WHERE network = 'solana' AND transaction_hash = ${signature} AND invalidated_at IS NULL
          AND invoice_id IN (SELECT id FROM invoices WHERE livemode = ${livemode})`
      }, Effect.orDie)
    }
  })
