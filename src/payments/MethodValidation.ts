import { base58 } from "@scure/base"
import { checksumAddress } from "./EvmAddress.ts"
import type { MethodInput } from "./CheckoutSettingsRepo.ts"
import { parseAccountKey } from "./AccountKey.ts"
import { isEvm, SUPPORTED_METHODS } from "./Networks.ts"

const XPUB_VERSION = 0x0488b21e
const ZPUB_VERSION = 0x04b24746

/** A mainnet account-level extended public key (checksummed base58; xpub, or zpub for bitcoin). */
const isAccountKey = (value: string, allowZpub: boolean): boolean => {
  try {
    const decoded = base58.decode(value)
    if (decoded.length !== 82) return false
    const version = new DataView(decoded.buffer, decoded.byteOffset).getUint32(0)
    if (version !== XPUB_VERSION && !(allowZpub && version === ZPUB_VERSION)) return false
    const key = parseAccountKey(value)
    return key.publicKey !== null && key.privateKey === null
  } catch {
    return false
  }
}

const isChecksummedEvmAddress = (value: string): boolean => {
  try {
    return checksumAddress(value) === value
  } catch {
    return false
  }
}

const isSolanaKey = (value: string): boolean => {
  try {
    return /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(value) && base58.decode(value).length === 32
  } catch {
    return false
  }
}

/**
 * Checks what each payment method needs; returns the first problem as a message naming the
 * method and field (`paymentMethods[1].xpub must be ...`), or undefined when all are valid.
 */
export const validateMethods = (
  methods: ReadonlyArray<MethodInput>,
  hasToken: (method: MethodInput) => boolean
): string | undefined => {
  const seen = new Set<string>()
  let defaults = 0
  for (const [index, method] of methods.entries()) {
    const at = `paymentMethods[${index}]`
    const supported = SUPPORTED_METHODS.some((candidate) =>
      candidate.network === method.network && candidate.assetCode === method.assetCode && candidate.railType === method.railType
    )
    if (!supported) return `${at}: ${method.assetCode} on ${method.network} with railType ${method.railType} is not supported`
    const key = `${method.network}:${method.assetCode}:${method.railType}`
    if (seen.has(key)) return `${at} repeats ${method.assetCode} on ${method.network} (${method.railType})`
    seen.add(key)
    if (method.isDefault) defaults++
    if (!hasToken(method)) return `${at}: no token contract is configured for ${method.assetCode} on ${method.network}`
    if (method.network === "bitcoin") {
      if (method.xpub === null || !isAccountKey(method.xpub, true)) return `${at}.xpub must be a mainnet account xpub or zpub`
    } else if (method.network === "solana") {
      if (method.recipientAddress === null || !isSolanaKey(method.recipientAddress)) {
        return `${at}.recipientAddress must be a base58 Solana public key (32 bytes)`
      }
    } else if (isEvm(method.network) && method.railType === "wallet_contract") {
      if (method.recipientAddress === null || !isChecksummedEvmAddress(method.recipientAddress)) {
        return `${at}.recipientAddress must be an EIP-55 checksummed address`
      }
    } else if (method.xpub === null || !isAccountKey(method.xpub, false)) {
      return `${at}.xpub must be a mainnet account xpub (m/44'/60'/0')`
    }
  }
  if (defaults > 1) return "paymentMethods: at most one method can be the default"
  return undefined
}
