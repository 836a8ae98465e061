import type { InvoiceId, PaymentOptionId } from "../domain/Ids.ts"
import type { PaymentOptionRecord } from "../domain/Invoice.ts"
import { formatAtomic, type Micros, quoteAtomic } from "../domain/Money.ts"
import { bitcoinAddress, evmDepositAddress, solanaReference } from "./Derivation.ts"
import { checksumAddress } from "./EvmAddress.ts"
import { type PaymentMethod, type RailSettingsShape, testTokenContractOf, tokenContractOf } from "./PaymentMethod.ts"
import { forwarderAddress } from "./Forwarders.ts"
import { chainIdOf, DECIMALS, type EvmNetwork, isEvm } from "./Networks.ts"
import { bitcoinUri, eip681Uri, solanaPayUri } from "./PaymentUris.ts"
import { qrSvg } from "./QrCode.ts"

export interface OptionRequest {
  readonly invoiceId: InvoiceId
  readonly amountMicros: Micros
  readonly label: string
  readonly method: PaymentMethod
  readonly optionId: PaymentOptionId
  readonly isDefault: boolean
  readonly position: number
  /** USD per whole unit of the asset as micro-dollars (1_000_000 for stablecoins). */
  readonly rateMicros: bigint
  /** A fresh derivation index for xpub-derived addresses. */
  readonly derivationIndex: number | undefined
  /**
   * The address at that index when already known (the bitcoin pool stores it; a deposit address
   * shared by options on several EVM networks is derived once): not derived again.
   */
  readonly knownAddress?: string | undefined
  /**
   * False for a test invoice's option (issue #55): EVM URIs name the testnet's chain id, tokens are
   * the testnet ones where configured, bitcoin addresses are signet ones (`tb1`). Absent: live.
   */
  readonly livemode?: boolean | undefined
}

export { bitcoinUri, eip681Uri, solanaPayUri }

const rateText = (rateMicros: bigint) => formatAtomic(rateMicros, 6)

export class OptionBuildError extends Error {}

type BuiltOption = PaymentOptionRecord & { reference: string | null; derivationIndex: number | null }
type OptionBase = Omit<BuiltOption, "destinationAddress" | "paymentUri" | "qrCode" | "optionPayload">

/** What every rail's option needs: the quoted amount, the token and the confirmations. */
interface Quoted {
  readonly base: OptionBase
  readonly decimals: number
  readonly quotedAtomic: bigint
  readonly tokenContract: string | null
  readonly requiredConfirmations: number
}

const bitcoinOption = (request: OptionRequest, { base, quotedAtomic, requiredConfirmations }: Quoted): BuiltOption => {
  const { method } = request
  if (method.xpub === null || request.derivationIndex === undefined) throw new OptionBuildError("bitcoin method has no xpub")
  // A test invoice's address is the signet encoding of the key at that index, never the pool's mainnet one.
  const address = request.livemode === false
    ? bitcoinAddress(method.xpub, request.derivationIndex, "tb")
    : request.knownAddress ?? bitcoinAddress(method.xpub, request.derivationIndex)
  const uri = bitcoinUri(address, quotedAtomic)
  return {
    ...base,
    destinationAddress: address,
    paymentUri: uri,
    qrCode: qrSvg(uri),
    optionPayload: { railType: "address_transfer", requiredConfirmations }
  }
}

const solanaOption = (request: OptionRequest, settings: RailSettingsShape, { base, decimals, quotedAtomic, requiredConfirmations, tokenContract }: Quoted): BuiltOption => {
  const { method } = request
  if (method.recipientAddress === null || tokenContract === null) throw new OptionBuildError("solana method has no recipient")
  const reference = solanaReference()
  const memo = `${settings.servicePrefix}:${request.invoiceId}:${request.optionId}`
  const amount = formatAtomic(quotedAtomic, decimals)
  const uri = solanaPayUri({ recipient: method.recipientAddress, amount, mint: tokenContract, reference, label: request.label, memo })
  return {
    ...base,
    reference,
    destinationAddress: method.recipientAddress,
    paymentUri: uri,
    qrCode: qrSvg(uri),
    optionPayload: {
      railType: "address_transfer",
      methodType: "solana",
      paymentUri: uri,
      recipientAddress: method.recipientAddress,
      reference,
      mintAddress: tokenContract,
      decimals,
      amountAtomic: quotedAtomic.toString(),
      memo,
      requiredConfirmations
    }
  }
}

const walletContractOption = (request: OptionRequest, settings: RailSettingsShape, network: EvmNetwork, tokenContract: string, quoted: Quoted): BuiltOption => {
  const { method } = request
  if (method.recipientAddress === null) throw new OptionBuildError("wallet-contract method has no recipient")
  const factory = settings.forwarder.factories[network]
  if (factory === undefined) throw new OptionBuildError(`no forwarder factory configured on ${network}`)
  const contractAddress = forwarderAddress(factory, request.optionId, checksumAddress(method.recipientAddress))
  return {
    ...quoted.base,
    destinationAddress: null,
    paymentUri: null,
    qrCode: null,
    optionPayload: {
      railType: "wallet_contract",
      chainId: chainIdOf(network, request.livemode !== false),
      contractAddress,
      tokenContract,
      recipient: method.recipientAddress,
      decimals: quoted.decimals,
      requiredConfirmations: quoted.requiredConfirmations,
      paymentAmountAtomic: quoted.quotedAtomic.toString()
    }
  }
}

const depositAddressOption = (request: OptionRequest, network: EvmNetwork, tokenContract: string, quoted: Quoted): BuiltOption => {
  const { method } = request
  if (method.xpub === null || request.derivationIndex === undefined) throw new OptionBuildError("address-transfer method has no xpub")
  const address = request.knownAddress ?? evmDepositAddress(method.xpub, request.derivationIndex)
  const chainId = chainIdOf(network, request.livemode !== false)
  const uri = eip681Uri(tokenContract, chainId, address, quoted.quotedAtomic)
  return {
    ...quoted.base,
    destinationAddress: address,
    paymentUri: uri,
    qrCode: qrSvg(uri),
    optionPayload: {
      railType: "address_transfer",
      chainId,
      tokenContract,
      recipient: address,
      decimals: quoted.decimals,
      requiredConfirmations: quoted.requiredConfirmations,
      paymentAmountAtomic: quoted.quotedAtomic.toString()
    }
  }
}

/** The quote and the fields every option shares. */
const quotedOf = (request: OptionRequest, settings: RailSettingsShape): Quoted => {
  const { method } = request
  const decimals = DECIMALS[method.assetCode]
  const quotedAtomic = quoteAtomic(request.amountMicros, request.rateMicros, decimals)
  const requiredConfirmations = settings.confirmations[method.network]
  const tokenOf = request.livemode === false ? testTokenContractOf : tokenContractOf
  const tokenContract = method.assetCode === "BTC" ? null : tokenOf(settings, method.network, method.assetCode) ?? null
  if (method.assetCode !== "BTC" && tokenContract === null) {
    throw new OptionBuildError(`no token contract configured for ${method.assetCode} on ${method.network}`)
  }
  const base: OptionBase = {
    id: request.optionId,
    invoiceId: request.invoiceId,
    railType: method.railType,
    assetCode: method.assetCode,
    network: method.network,
    tokenContract,
    decimals,
    quotedAtomic,
    quoteRate: rateText(request.rateMicros),
    status: "active" as const,
    isDefault: request.isDefault,
    requiredConfirmations,
    reference: null,
    derivationIndex: request.derivationIndex ?? null
  }
  return { base, decimals, quotedAtomic, tokenContract, requiredConfirmations }
}

/**
 * Builds one payment option: addresses, URI, QR code and executable payload. The create path
 * runs it on the payment worker thread (PaymentTasks, kind `options`).
 */
export const buildOption = (request: OptionRequest, settings: RailSettingsShape): BuiltOption => {
  const { network, railType } = request.method
  const quoted = quotedOf(request, settings)
  if (network === "bitcoin") return bitcoinOption(request, quoted)
  if (network === "solana") return solanaOption(request, settings, quoted)
  if (!isEvm(network) || quoted.tokenContract === null) throw new OptionBuildError(`unsupported network ${network}`)
  return railType === "wallet_contract"
    ? walletContractOption(request, settings, network, quoted.tokenContract, quoted)
    : depositAddressOption(request, network, quoted.tokenContract, quoted)
}
