import { base58, bech32 } from "@scure/base"
import { keccak_256 } from "@noble/hashes/sha3.js"
import { parseAccountKey } from "./AccountKey.ts"
import { checksumOfBytes, type Hex } from "./EvmAddress.ts"
import { createHash, createHmac, createSecretKey, type KeyObject } from "node:crypto"
import { pointAddScalar } from "tiny-secp256k1"

interface ChainNode {
  readonly compressed: Uint8Array
  /** The chain code as a KeyObject: an HMAC keyed with raw bytes converts them on every call. */
  readonly chainCode: KeyObject
}

/** The external chain (…/0) of each account key, parsed once: derivation is on the hot path of create. */
const chainNodes = new Map<string, ChainNode>()

const externalChain = (accountKey: string): ChainNode => {
  const cached = chainNodes.get(accountKey)
  if (cached !== undefined) return cached
  const chain = parseAccountKey(accountKey).deriveChild(0)
  if (chain.publicKey === null || chain.chainCode === null) throw new Error("extended key has no public key")
  const node = { compressed: chain.publicKey, chainCode: createSecretKey(chain.chainCode) }
  if (chainNodes.size > 10_000) chainNodes.clear()
  chainNodes.set(accountKey, node)
  return node
}

/** Order of the secp256k1 group: a BIP32 tweak at or above it is invalid (probability below 2^-127). */
const CURVE_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n

/**
 * BIP32 public (non-hardened) child derivation: parent + HMAC-SHA512(chain code, parent, index)·G.
 * The point arithmetic runs in libsecp256k1 (tiny-secp256k1, WebAssembly), about four times
 * faster than the JavaScript bigint implementation, because it is on the request path of create.
 */
const childKey = (accountKey: string, index: number, compressed: boolean): Uint8Array => {
  const node = externalChain(accountKey)
  const data = Buffer.allocUnsafe(37)
  data.set(node.compressed, 0)
  data.writeUInt32BE(index, 33)
  const tweak = createHmac("sha512", node.chainCode).update(data).digest().subarray(0, 32)
  const scalar = BigInt(`0x${tweak.toString("hex")}`)
  const child = scalar === 0n || scalar >= CURVE_ORDER ? null : pointAddScalar(node.compressed, tweak, compressed)
  if (child === null) throw new Error(`invalid child ${index}: use the next index`)
  return child
}

/** BIP84 receive address m/84'/0'/0'/0/index from an account xpub/zpub: P2WPKH, bech32 version 0. */
export const bitcoinAddress = (accountKey: string, index: number, prefix: "bc" | "tb" = "bc"): string => {
  const hash160 = createHash("ripemd160").update(createHash("sha256").update(childKey(accountKey, index, true)).digest()).digest()
  return bech32.encode(prefix, [0, ...bech32.toWords(hash160)])
}

/** EVM deposit address m/44'/60'/0'/0/index from an account xpub (the key at m/44'/60'/0'). */
export const evmDepositAddress = (accountKey: string, index: number): Hex => checksumOfBytes(keccak_256(childKey(accountKey, index, false).subarray(1)).subarray(12))

/** A fresh Solana Pay reference: 32 random bytes as a base58 public key. */
export const solanaReference = (): string => base58.encode(crypto.getRandomValues(new Uint8Array(32)))
