import { ed25519 } from "@noble/curves/ed25519.js"
import { sha256 } from "@noble/hashes/sha2.js"
import { base58, createBase58check, bech32, bech32m } from "@scure/base"
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

const base58check = createBase58check(sha256)
/** Mainnet version bytes of base58 addresses: P2PKH (`1…`) and P2SH (`3…`). */
const BASE58_VERSIONS = new Set([0x00, 0x05])

/** A segwit program's length is valid for its version (BIP141, BIP350). */
const validProgram = (version: number, program: Uint8Array) =>
  version === 0 ? program.length === 20 || program.length === 32 : version === 1 ? program.length === 32 : program.length >= 2 && program.length <= 40

const segwitAddress = (text: string): string | undefined => {
  const lower = text.toLowerCase()
  if (text !== lower && text !== text.toUpperCase()) return undefined
  if (!lower.startsWith("bc1")) return undefined
  // Version 0 is bech32; versions 1 to 16 are bech32m (BIP350).
  const version = bech32.decodeUnsafe(lower, 90)?.words[0] ?? bech32m.decodeUnsafe(lower, 90)?.words[0]
  if (version === undefined || version > 16) return undefined
  const decoded = (version === 0 ? bech32 : bech32m).decodeUnsafe(lower, 90)
  if (decoded === undefined || decoded.prefix !== "bc") return undefined
  const program = (version === 0 ? bech32 : bech32m).fromWordsUnsafe(decoded.words.slice(1))
  return program !== undefined && validProgram(version, program) ? lower : undefined
}

const base58Address = (text: string): string | undefined => {
  try {
    const payload = base58check.decode(text)
    return payload.length === 21 && BASE58_VERSIONS.has(payload[0]) ? text : undefined
  } catch {
    return undefined
  }
}

/**
 * A mainnet address (`1…`, `3…`, `bc1…`) with a valid checksum, in its canonical form (bech32 in
 * lower case): what @scure/btc-signer's `Address(NETWORK)` accepts (test/unit/refund-address.test.ts
 * checks it against that), without loading it at start (it loads with the bitcoin watcher only).
 */
const bitcoinDestination = (text: string): RefundDestination | undefined => {
  const address = segwitAddress(text) ?? base58Address(text)
  return address === undefined ? undefined : { address, watchKey: address }
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

/** Solana's System Program and the token programs: no wallet, nobody can spend what is sent there. */
const SOLANA_PROGRAMS = new Set([
  "11111111111111111111111111111111",
  "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
  "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb",
  "ATokenGPvbdGVxr1b1hRcZH7Z1nmpZ8CNTjZJCAq8J1"
])

/**
 * Where nobody holds the key, in lower case: the whole precompile and system range below 2^16
 * (the zero address, 0x…01 to 0x…11, P256VERIFY at 0x…0100 on base and arbitrum, arbitrum's
 * 0x…64 and up, and the customary 0x…dEaD), the burn address 0xdEaD0000…42069, and the OP stack's
 * system addresses 0xdeaddead…dead0000 to …ffff (base's depositor account is one).
 */
const EVM_BURN_PATTERNS = [/^0x0{36}[0-9a-f]{4}$/, /^0xdead0{16}(?:42069){4}$/, /^0x(?:dead){9}[0-9a-f]{4}$/]

const isEvmBurnAddress = (lower: string) => EVM_BURN_PATTERNS.some((pattern) => pattern.test(lower))

const isEvm = (network: string) => network === "ethereum" || network === "arbitrum" || network === "base"

/** Addresses compared as the watchers key them: EVM in lower case, the others exactly. */
export const sameAddress = (network: string, a: string, b: string) => isEvm(network) ? a.toLowerCase() === b.toLowerCase() : a === b

/** Why no refund can be sent to this address, whatever the service stores: undefined when none. */
export const burnAddressRefusal = (network: string, destination: RefundDestination): string | undefined =>
  (isEvm(network) && isEvmBurnAddress(destination.watchKey)) || (network === "solana" && SOLANA_PROGRAMS.has(destination.address))
    ? "refundAddress must not be a burn or system address"
    : undefined

/** Why the address is refused as one of the deployment's token contracts, mints or forwarder factories: undefined when it is none of them. */
export const tokenContractRefusal = (network: string, destination: RefundDestination, contracts: ReadonlyArray<string>): string | undefined =>
  contracts.some((contract) => sameAddress(network, contract, destination.address)) ? "refundAddress must not be a token contract" : undefined

export const DEPOSIT_ADDRESS_MESSAGE = "refundAddress must not be a deposit address of this service"
export const CONTRACT_ADDRESS_MESSAGE = "refundAddress must not be a contract (it has code on the network)"
/** Stored on a refund whose EVM address could not be checked for code. */
export const CODE_NOT_CHECKED_NOTE = "The refund address was not checked for contract code: no endpoint of the network answered or none is configured"
