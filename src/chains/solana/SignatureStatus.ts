import type { SignatureStatus } from "@solana/web3.js"
import { Effect } from "effect"
import { COMMITMENT, type SolanaRpcClient } from "./SolanaCluster.ts"

/** getSignatureStatuses accepts at most 256 signatures per call. */
const STATUS_BATCH = 256

/** The statuses of `signatures` (in their order, null where unknown), asked in batches the RPC accepts. */
export const signatureStatuses = (client: SolanaRpcClient, signatures: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const statuses: Array<SignatureStatus | null> = []
    for (let start = 0; start < signatures.length; start += STATUS_BATCH) {
      const batch = signatures.slice(start, start + STATUS_BATCH)
      const answer = yield* client.call("getSignatureStatuses", (connection) => connection.getSignatureStatuses(batch, { searchTransactionHistory: true }))
      statuses.push(...answer.value)
    }
    return statuses
  })

/**
 * A transaction's signature is gone when no endpoint knows it: every one must answer, so that a
 * failover to a node without this history never drops a real transaction (undefined: not known yet).
 */
export const goneFromChain = (client: SolanaRpcClient, signature: string) =>
  Effect.map(
    client.everyEndpoint("getTransaction", (connection) => connection.getTransaction(signature, { commitment: COMMITMENT, maxSupportedTransactionVersion: 0 })),
    (transactions) => transactions === undefined ? undefined : transactions.every((transaction) => transaction === null)
  )
