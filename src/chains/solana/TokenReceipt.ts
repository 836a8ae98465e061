import type { VersionedTransactionResponse } from "@solana/web3.js"

/** The tokens a transaction moved into one token account: its balance change, as the payments are read. */
export interface TokenReceipt {
  /** Every account key of the transaction (base58), references included. */
  readonly keys: ReadonlyArray<string>
  readonly accountIndex: number
  readonly mint: string
  readonly received: bigint
  /** Who paid: the owner of the account of this mint whose balance fell, else the fee payer. */
  readonly payer: string
}

/** What a successful transaction moved into `tokenAccount` (its balance change); undefined when nothing. */
export const receiptOf = (transaction: VersionedTransactionResponse, tokenAccount: string, fallbackMint: string): TokenReceipt | undefined => {
  const meta = transaction.meta
  // A failed transaction moved nothing: not a payment, whatever its instructions say.
  if (meta === null || meta.err !== null) return undefined
  const accountKeys = transaction.transaction.message.getAccountKeys({ accountKeysFromLookups: meta.loadedAddresses })
  const keys: Array<string> = []
  for (let index = 0; index < accountKeys.length; index++) keys.push(accountKeys.get(index)!.toBase58())
  const accountIndex = keys.indexOf(tokenAccount)
  if (accountIndex === -1) return undefined
  const pre = meta.preTokenBalances?.find((balance) => balance.accountIndex === accountIndex)
  const post = meta.postTokenBalances?.find((balance) => balance.accountIndex === accountIndex)
  const received = BigInt(post?.uiTokenAmount.amount ?? "0") - BigInt(pre?.uiTokenAmount.amount ?? "0")
  if (received <= 0n) return undefined
  const mint = post?.mint ?? pre?.mint ?? fallbackMint
  return { keys, accountIndex, mint, received, payer: payerOf(meta, mint) ?? keys[0] ?? "" }
}

/** The owner of the token account of `mint` whose balance the transaction lowered (the paying wallet). */
const payerOf = (meta: NonNullable<VersionedTransactionResponse["meta"]>, mint: string): string | undefined => {
  for (const before of meta.preTokenBalances ?? []) {
    if (before.mint !== mint || before.owner === undefined) continue
    const after = meta.postTokenBalances?.find((balance) => balance.accountIndex === before.accountIndex)
    if (BigInt(after?.uiTokenAmount.amount ?? "0") < BigInt(before.uiTokenAmount.amount)) return before.owner
  }
  return undefined
}
