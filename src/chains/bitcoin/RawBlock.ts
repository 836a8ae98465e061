import { sha256 } from "@noble/hashes/sha2.js"
import { hex } from "@scure/base"
import { Address, NETWORK, OutScript } from "@scure/btc-signer"
import { BTCArray, RawOldTx, RawTx } from "@scure/btc-signer/script.js"

/** One output of a block's transaction that pays an address. */
export interface BlockOutput {
  readonly txid: string
  readonly index: number
  readonly address: string
  readonly value: bigint
}

const HEADER_BYTES = 80
const Transactions = BTCArray(RawTx)
const mainnet = Address(NETWORK)
const ADDRESSED = new Set(["pkh", "sh", "wpkh", "wsh", "tr"])

/** The transaction id: the double SHA-256 of the transaction without its witnesses, byte-reversed. */
const txidOf = (tx: typeof RawTx extends { decode: (bytes: Uint8Array) => infer T } ? T : never) =>
  hex.encode(sha256(sha256(RawOldTx.encode({ version: tx.version, inputs: tx.inputs, outputs: tx.outputs, lockTime: tx.lockTime }))).reverse())

const decodeScript = (script: Uint8Array) => {
  try {
    return OutScript.decode(script)
  } catch {
    return undefined // a non-standard script pays no address
  }
}

/** Every output with a standard address in a raw block (80-byte header, then the transactions in wire format). */
export const parseBlockOutputs = (block: Uint8Array): Array<BlockOutput> => {
  const outputs: Array<BlockOutput> = []
  for (const tx of Transactions.decode(block.subarray(HEADER_BYTES))) {
    let txid: string | undefined
    tx.outputs.forEach((output, index) => {
      const script = decodeScript(output.script)
      if (script === undefined || !ADDRESSED.has(script.type)) return
      txid ??= txidOf(tx)
      outputs.push({ txid, index, address: mainnet.encode(script), value: output.amount })
    })
  }
  return outputs
}
