import { sha256 } from "@noble/hashes/sha2.js"
import { hex } from "@scure/base"
import { Address, NETWORK, OutScript, TEST_NETWORK } from "@scure/btc-signer"
import { BTCArray, RawOldTx, RawTx } from "@scure/btc-signer/script.js"

/** One output of a block's transaction that pays an address. */
export interface BlockOutput {
  readonly txid: string
  readonly index: number
  readonly address: string
  readonly value: bigint
}

const HEADER_BYTES = 80
const MERKLE_ROOT_AT = 36
const Transactions = BTCArray(RawTx)
const mainnet = Address(NETWORK)
/** Signet (as testnet) encodes addresses as `tb1…`: the bitcoin testnet watcher's. */
const signet = Address(TEST_NETWORK)
const ADDRESSED = new Set(["pkh", "sh", "wpkh", "wsh", "tr"])

type DecodedTx = ReturnType<typeof RawTx.decode>

const sha256d = (bytes: Uint8Array) => sha256(sha256(bytes))

/** The transaction id in internal byte order: the double SHA-256 of the transaction without its witnesses. */
const internalTxid = (tx: DecodedTx) => sha256d(RawOldTx.encode({ version: tx.version, inputs: tx.inputs, outputs: tx.outputs, lockTime: tx.lockTime }))

const displayed = (bytes: Uint8Array) => hex.encode(Uint8Array.from(bytes).reverse())

/** Bitcoin's merkle root over internal-order txids (an odd level repeats its last node). */
export const merkleRootOf = (txids: ReadonlyArray<Uint8Array>): Uint8Array => {
  let level = txids
  while (level.length > 1) {
    const next: Array<Uint8Array> = []
    for (let i = 0; i < level.length; i += 2) {
      const pair = new Uint8Array(64)
      pair.set(level[i], 0)
      pair.set(level[i + 1] ?? level[i], 32)
      next.push(sha256d(pair))
    }
    level = next
  }
  return level[0] ?? new Uint8Array(32)
}

const decodeScript = (script: Uint8Array) => {
  try {
    return OutScript.decode(script)
  } catch {
    return undefined // a non-standard script pays no address
  }
}

/**
 * Checks that a raw block is the block asked for: its header hashes to `blockHash`, and the merkle
 * root of its transactions is the header's. So an endpoint cannot leave a transaction out of (or
 * slip one into) a block it serves raw. Throws on a mismatch.
 */
const verifiedTransactions = (block: Uint8Array, blockHash: string) => {
  if (block.length < HEADER_BYTES) throw new Error("shorter than a block header")
  const header = block.subarray(0, HEADER_BYTES)
  const headerHash = displayed(sha256d(header))
  if (headerHash !== blockHash.toLowerCase()) throw new Error(`its header hashes to ${headerHash}`)
  const txs = Transactions.decode(block.subarray(HEADER_BYTES))
  const txids = txs.map(internalTxid)
  const root = merkleRootOf(txids)
  if (hex.encode(root) !== hex.encode(header.subarray(MERKLE_ROOT_AT, MERKLE_ROOT_AT + 32))) {
    throw new Error("its transactions do not match its header's merkle root")
  }
  return txs.map((tx, at) => ({ tx, txid: displayed(txids[at]) }))
}

/**
 * Every output with a standard address in a raw block (80-byte header, then the transactions in
 * wire format), once the block is verified against `blockHash` (see `verifiedTransactions`);
 * addresses in signet's encoding when `testnet`.
 */
export const parseBlockOutputs = (block: Uint8Array, blockHash: string, testnet = false): Array<BlockOutput> => {
  const encoding = testnet ? signet : mainnet
  const outputs: Array<BlockOutput> = []
  for (const { tx, txid } of verifiedTransactions(block, blockHash)) {
    tx.outputs.forEach((output, index) => {
      const script = decodeScript(output.script)
      if (script === undefined || !ADDRESSED.has(script.type)) return
      outputs.push({ txid, index, address: encoding.encode(script), value: output.amount })
    })
  }
  return outputs
}
