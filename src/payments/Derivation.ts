import { secp256k1 } from "@noble/curves/secp256k1.js"
import { base58 } from "@scure/base"
import { HDKey } from "@scure/bip32"
import { p2wpkh } from "@scure/btc-signer"
import { getContractAddress, type Hex, keccak256, toHex } from "viem"
import { publicKeyToAddress } from "viem/accounts"

/** SLIP-132 zpub version bytes (BIP84 account keys); xpub uses the library default. */
const ZPUB_VERSIONS = { private: 0x04b2430c, public: 0x04b24746 }

export const parseAccountKey = (extendedKey: string): HDKey =>
  HDKey.fromExtendedKey(extendedKey, extendedKey.startsWith("zpub") ? ZPUB_VERSIONS : undefined)

/** BIP84 receive address m/84'/0'/0'/0/index from an account xpub/zpub. */
export const bitcoinAddress = (accountKey: HDKey, index: number): string => {
  const child = accountKey.deriveChild(0).deriveChild(index)
  if (child.publicKey === null) throw new Error("extended key has no public key")
  const address = p2wpkh(child.publicKey).address
  if (address === undefined) throw new Error("could not encode address")
  return address
}

/** EVM deposit address m/44'/60'/0'/0/index from an account xpub (the key at m/44'/60'/0'). */
export const evmDepositAddress = (accountKey: HDKey, index: number): Hex => {
  const child = accountKey.deriveChild(0).deriveChild(index)
  if (child.publicKey === null) throw new Error("extended key has no public key")
  const uncompressed = decompress(child.publicKey)
  return publicKeyToAddress(toHex(uncompressed))
}

const decompress = (compressed: Uint8Array): Uint8Array => secp256k1.Point.fromBytes(compressed).toBytes(false)

/** Salt of a wallet-contract forwarder: keccak256 of the option id. */
export const forwarderSalt = (optionId: string): Hex => keccak256(toHex(optionId))

/** The counterfactual forwarder address of an option (CREATE2 from the factory). */
export const forwarderAddress = (factory: Hex, initCodeHash: Hex, optionId: string): Hex =>
  getContractAddress({ opcode: "CREATE2", from: factory, salt: forwarderSalt(optionId), bytecodeHash: initCodeHash })

/** A fresh Solana Pay reference: 32 random bytes as a base58 public key. */
export const solanaReference = (): string => base58.encode(crypto.getRandomValues(new Uint8Array(32)))
