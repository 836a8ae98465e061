import { createAssociatedTokenAccountIdempotentInstruction, createTransferCheckedInstruction, getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID } from "@solana/spl-token"
import { PublicKey, Transaction, TransactionInstruction } from "@solana/web3.js"

export const MEMO_PROGRAM_ID = new PublicKey("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr")
/** Memo v1, still used by some wallets; the watcher reads memos of both. */
export const MEMO_V1_PROGRAM_ID = new PublicKey("Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo")

export interface TransferRequest {
  readonly payer: PublicKey
  readonly recipient: PublicKey
  readonly mint: PublicKey
  readonly decimals: number
  readonly amountAtomic: bigint
  readonly reference: PublicKey
  readonly memo: string
  readonly blockhash: string
  readonly lastValidBlockHeight: number
  readonly tokenProgram?: PublicKey
}

/**
 * The unsigned legacy transaction of a Solana Pay SPL transfer, fee paid by the payer:
 * 1. an idempotent creation of the recipient's associated token account (a first payment to a
 *    recipient without one works; a no-op otherwise);
 * 2. the memo (`<prefix>:<invoice_id>:<option_id>`), with no signer keys;
 * 3. `transferChecked` of the exact amount from the payer's associated token account, with the
 *    reference as a read-only non-signer key after the instruction's own keys.
 * The transfer comes last and the memo right before it: that is where Solana Pay's
 * `validateTransfer` and wallets look for them.
 */
export const buildTransferTransaction = (request: TransferRequest): Transaction => {
  const tokenProgram = request.tokenProgram ?? TOKEN_PROGRAM_ID
  const source = getAssociatedTokenAddressSync(request.mint, request.payer, true, tokenProgram)
  const destination = getAssociatedTokenAddressSync(request.mint, request.recipient, true, tokenProgram)
  const transfer = createTransferCheckedInstruction(
    source,
    request.mint,
    destination,
    request.payer,
    request.amountAtomic,
    request.decimals,
    [],
    tokenProgram
  )
  transfer.keys.push({ pubkey: request.reference, isSigner: false, isWritable: false })
  return new Transaction({ feePayer: request.payer, blockhash: request.blockhash, lastValidBlockHeight: request.lastValidBlockHeight }).add(
    createAssociatedTokenAccountIdempotentInstruction(request.payer, destination, request.recipient, request.mint, tokenProgram),
    new TransactionInstruction({ programId: MEMO_PROGRAM_ID, keys: [], data: Buffer.from(request.memo, "utf8") }),
    transfer
  )
}

/** The base64 wire form of an unsigned transaction (signature slots left empty for the wallet). */
export const serializeUnsigned = (transaction: Transaction): string => transaction.serialize({ requireAllSignatures: false, verifySignatures: false }).toString("base64")
