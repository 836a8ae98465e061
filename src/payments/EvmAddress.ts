import { keccak_256 } from "@noble/hashes/sha3.js"

/*
 * The few EVM address computations that the API and the payment worker need, on @noble/hashes'
 * keccak rather than viem: viem costs about 20 MB resident per isolate, and it is loaded only by
 * the chain code of configured EVM networks (docs/decisions.md, Footprint).
 * test/unit/evm-address.test.ts checks each one against viem.
 */

/** A 0x-prefixed hex string. */
export type Hex = `0x${string}`

const ADDRESS = /^0x[0-9a-fA-F]{40}$/

const hexOf = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex")

export const bytesOf = (hex: string) => Buffer.from(hex.startsWith("0x") ? hex.slice(2) : hex, "hex")

export const keccakHex = (bytes: Uint8Array): Hex => `0x${hexOf(keccak_256(bytes))}`

/** EIP-55 mixed-case checksum of 20 address bytes. */
export const checksumOfBytes = (addressBytes: Uint8Array): Hex => {
  const lower = hexOf(addressBytes)
  const hash = hexOf(keccak_256(Buffer.from(lower, "ascii")))
  let out = "0x"
  for (let i = 0; i < 40; i++) out += parseInt(hash[i], 16) >= 8 ? lower[i].toUpperCase() : lower[i]
  return out as Hex
}

/** Whether the text is an address; with `strict` (viem's default), a mixed-case one must carry a valid checksum. */
export const isEvmAddress = (value: string, options: { readonly strict?: boolean } = {}): value is Hex => {
  if (!ADDRESS.test(value)) return false
  if (value.toLowerCase() === value) return true
  return options.strict === false || checksumOfBytes(bytesOf(value)) === value
}

/** The EIP-55 form of an address in any case (viem's `getAddress`): throws on text that is not 20 hex bytes. */
export const checksumAddress = (value: string): Hex => {
  if (!isEvmAddress(value, { strict: false })) throw new Error(`Address "${value}" is invalid.`)
  return checksumOfBytes(bytesOf(value))
}

/** The 32-byte ABI encoding of one address argument (left-padded). */
export const abiEncodeAddress = (address: string): Hex => `0x${"0".repeat(24)}${bytesOf(address).toString("hex")}`

/** Concatenates hex strings. */
export const concatHex = (parts: ReadonlyArray<string>): Hex => `0x${parts.map((part) => part.startsWith("0x") ? part.slice(2) : part).join("")}`

/** CREATE2 address from the init code's keccak256: the last 20 bytes of keccak256(0xff ++ deployer ++ salt ++ that hash), checksummed. */
export const create2AddressOfHash = (deployer: string, salt: Hex, initCodeHash: Uint8Array): Hex =>
  checksumOfBytes(keccak_256(Buffer.concat([Buffer.of(0xff), bytesOf(deployer), bytesOf(salt), initCodeHash])).subarray(12))

/** CREATE2 address: the last 20 bytes of keccak256(0xff ++ deployer ++ salt ++ keccak256(init code)), checksummed. */
export const create2Address = (deployer: string, salt: Hex, initCode: Hex): Hex => create2AddressOfHash(deployer, salt, keccak_256(bytesOf(initCode)))

export const ZERO_HASH: Hex = `0x${"0".repeat(64)}`
