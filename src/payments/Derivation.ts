import { secp256k1 } from "@noble/curves/secp256k1.js"
import { hmac } from "@noble/hashes/hmac.js"
import { sha512 } from "@noble/hashes/sha2.js"
import { base58 } from "@scure/base"
import { HDKey } from "@scure/bip32"
import { p2wpkh } from "@scure/btc-signer"
import { getContractAddress, type Hex, keccak256, toHex } from "viem"
import { publicKeyToAddress } from "viem/accounts"

/** SLIP-132 zpub version bytes (BIP84 account keys); xpub uses the library default. */
const ZPUB_VERSIONS = { private: 0x04b2430c, public: 0x04b24746 }

export const parseAccountKey = (extendedKey: string): HDKey =>
  HDKey.fromExtendedKey(extendedKey, extendedKey.startsWith("zpub") ? ZPUB_VERSIONS : undefined)

interface ChainNode {
  readonly point: ReturnType<typeof secp256k1.Point.fromBytes>
  readonly compressed: Uint8Array
  readonly chainCode: Uint8Array
}

/** The external chain (…/0) of each account key, parsed once: derivation is on the hot path of create. */
const chainNodes = new Map<string, ChainNode>()

const externalChain = (accountKey: string): ChainNode => {
  const cached = chainNodes.get(accountKey)
  if (cached !== undefined) return cached
  const chain = parseAccountKey(accountKey).deriveChild(0)
  if (chain.publicKey === null || chain.chainCode === null) throw new Error("extended key has no public key")
  const node = { point: secp256k1.Point.fromBytes(chain.publicKey), compressed: chain.publicKey, chainCode: chain.chainCode }
  if (chainNodes.size > 10_000) chainNodes.clear()
  chainNodes.set(accountKey, node)
  return node
}

/**
 * BIP32 public (non-hardened) child derivation, keeping the curve point so that no compressed
 * key has to be decompressed again (a square root) for the EVM address.
 */
const childPoint = (accountKey: string, index: number) => {
  const node = externalChain(accountKey)
  const data = new Uint8Array(37)
  data.set(node.compressed, 0)
  new DataView(data.buffer).setUint32(33, index)
  const digest = hmac(sha512, node.chainCode, data)
  const tweak = BigInt(`0x${Buffer.from(digest.subarray(0, 32)).toString("hex")}`)
  if (tweak === 0n || tweak >= secp256k1.Point.CURVE().n) throw new Error(`invalid child ${index}: use the next index`)
  return secp256k1.Point.BASE.multiply(tweak).add(node.point)
}

/** BIP84 receive address m/84'/0'/0'/0/index from an account xpub/zpub. */
export const bitcoinAddress = (accountKey: string, index: number): string => {
  const address = p2wpkh(childPoint(accountKey, index).toBytes(true)).address
  if (address === undefined) throw new Error("could not encode address")
  return address
}

/** EVM deposit address m/44'/60'/0'/0/index from an account xpub (the key at m/44'/60'/0'). */
export const evmDepositAddress = (accountKey: string, index: number): Hex =>
  publicKeyToAddress(toHex(childPoint(accountKey, index).toBytes(false)))

/** Salt of a wallet-contract forwarder: keccak256 of the option id. */
export const forwarderSalt = (optionId: string): Hex => keccak256(toHex(optionId))

/** The counterfactual forwarder address of an option (CREATE2 from the factory). */
export const forwarderAddress = (factory: Hex, initCodeHash: Hex, optionId: string): Hex =>
  getContractAddress({ opcode: "CREATE2", from: factory, salt: forwarderSalt(optionId), bytecodeHash: initCodeHash })

/** A fresh Solana Pay reference: 32 random bytes as a base58 public key. */
export const solanaReference = (): string => base58.encode(crypto.getRandomValues(new Uint8Array(32)))
