import { getAssociatedTokenAddressSync } from "@solana/spl-token"
import { PublicKey, type VersionedTransactionResponse } from "@solana/web3.js"
import type { WaitingEvidence } from "../watcher/ChainRepo.ts"
import { Effect } from "effect"
import { answerFor, type ReportedTransfer, type SeenTransfer } from "../source/Corroboration.ts"
import { COMMITMENT, type SolanaRpcClient } from "./SolanaCluster.ts"
import { receiptOf, type TokenReceipt } from "./TokenReceipt.ts"

const slotRef = (slot: bigint | number) => `slot:${slot}`

/** A receipt as a transfer to compare: the account's index is its position, the slot its block. */
const asTransfer = (signature: string, tokenAccount: string, receipt: TokenReceipt, slot: number): ReportedTransfer & SeenTransfer => ({
  transactionHash: signature,
  outputIndex: receipt.accountIndex,
  token: receipt.mint,
  toAddress: tokenAccount,
  amountAtomic: receipt.received,
  blockHeight: BigInt(slot),
  blockHash: slotRef(slot)
})

/**
 * The corroboration of a Solana transfer (Corroboration.ts): `getTransaction` of its signature on
 * another endpoint must show the same balance change of the same token account, in the same slot,
 * with the same account keys (so the same reference).
 */
export const corroborateReceipt = (
  client: SolanaRpcClient,
  reporter: number,
  reported: { readonly signature: string; readonly tokenAccount: string; readonly receipt: TokenReceipt; readonly transaction: VersionedTransactionResponse }
) => {
  const { signature, tokenAccount, receipt, transaction } = reported
  const claimed = asTransfer(signature, tokenAccount, receipt, transaction.slot)
  return client.corroborate(reporter, signature, (call, endpointSlot) =>
    Effect.map(
      call("getTransaction", (connection) => connection.getTransaction(signature, { commitment: COMMITMENT, maxSupportedTransactionVersion: 0 })),
      (seen) => {
        if (seen === null) return answerFor(claimed, undefined, endpointSlot)
        const seenReceipt = receiptOf(seen, tokenAccount, receipt.mint)
        const sameKeys = seenReceipt !== undefined && seenReceipt.keys.join(",") === receipt.keys.join(",")
        return answerFor(claimed, sameKeys ? [asTransfer(signature, tokenAccount, seenReceipt, seen.slot)] : [], endpointSlot)
      }
    ))
}

/**
 * A payment recorded earlier without corroboration asked again of every endpoint, its reporter
 * included (WatcherRecheck): the same balance change of the recipient's token account for the mint,
 * at the same account index and slot. The reference is not compared here: the row has no keys, and
 * a transaction is identified by its signature.
 */
export const recheckReceipt = (client: SolanaRpcClient, row: WaitingEvidence) => {
  const tokenAccount = tokenAccountOf(row.destinationAddress ?? "", row.token)
  const slot = row.blockHeight ?? 0n
  const claimed: ReportedTransfer = {
    transactionHash: row.transactionHash,
    outputIndex: row.outputIndex,
    token: row.token,
    toAddress: tokenAccount ?? "",
    amountAtomic: row.amountAtomic,
    blockHeight: slot,
    blockHash: slotRef(slot)
  }
  return client.corroborate(client.indexOf(row.reporter), row.transactionHash, (call, endpointSlot) =>
    Effect.map(
      call("getTransaction", (connection) => connection.getTransaction(row.transactionHash, { commitment: COMMITMENT, maxSupportedTransactionVersion: 0 })),
      (seen) => {
        if (seen === null) return answerFor(claimed, undefined, endpointSlot)
        const seenReceipt = tokenAccount === undefined ? undefined : receiptOf(seen, tokenAccount, row.token)
        return answerFor(claimed, seenReceipt === undefined ? [] : [asTransfer(row.transactionHash, tokenAccount!, seenReceipt, seen.slot)], endpointSlot)
      }
    ), { askReporter: true })
}

/** The recipient's associated token account of the mint, undefined when they are not a valid pair. */
export const tokenAccountOf = (recipient: string, mint: string) => {
  try {
    return getAssociatedTokenAddressSync(new PublicKey(mint), new PublicKey(recipient), true).toBase58()
  } catch {
    return undefined
  }
}
