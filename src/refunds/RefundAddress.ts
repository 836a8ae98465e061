import { ed25519 } from "@noble/curves/ed25519.js"
import { base58 } from "@scure/base"
import { Address, NETWORK } from "@scure/btc-signer"
import { bytesOf, checksumOfBytes } from "../payments/EvmAddress.ts"

/** A refund address as stored (its canonical form) and the key the watchers match it by. */
export interface RefundDestination {
  readonly address: string
  /** EVM: the lower-case address; bitcoin: the canonical address. Solana refunds are matched by their reference instead. */
  readonly watchKey: string
}

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/

/** 0x and 40 hex digits; mixed case must carry a valid EIP-55 checksum (all lower or all upper case carries none). */
const evmDestination = (text: string): RefundDestination | undefined => {
  if (!EVM_ADDRESS.test(text)) return undefined
  const hex = text.slice(2)
  const checksummed = checksumOfBytes(bytesOf(text))
  if (hex !== hex.toLowerCase() && hex !== hex.toUpperCase() && checksummed !== text) return undefined
  return { address: checksummed, watchKey: text.toLowerCase() }
}

/**
 * The canonical base58 of a 32-byte key on the ed25519 curve: a wallet that can sign. An
 * associated token account (off the curve) is refused: tokens must go to the wallet that owns one.
 */
const solanaDestination = (text: string): RefundDestination | undefined => {
  try {
    const bytes = base58.decode(text)
    if (bytes.length !== 32 || base58.encode(bytes) !== text) return undefined
    ed25519.Point.fromBytes(bytes)
    return { address: text, watchKey: text }
  } catch {
    return undefined
  }
}

/** A mainnet address (`1…`, `3…`, `bc1…`) with a valid checksum, in its canonical form (bech32 in lower case). */
const bitcoinDestination = (text: string): RefundDestination | undefined => {
  try {
    const network = Address(NETWORK)
    const address = network.encode(network.decode(text))
    return { address, watchKey: address }
  } catch {
    return undefined
  }
}

/** The refund address of a network in its canonical form, or undefined when it is not a valid address there. */
export const refundDestination = (network: string, text: string): RefundDestination | undefined => {
  if (text.length > 128) return undefined
  switch (network) {
    case "ethereum":
    case "arbitrum":
    case "base":
      return evmDestination(text)
    case "solana":
      return solanaDestination(text)
    case "bitcoin":
      return bitcoinDestination(text)
    default:
      return undefined
  }
}

/** The spec-shaped message of an invalid refund address. */
export const invalidRefundAddressMessage = (network: string) => `refundAddress must be a valid ${network} address`
