import type { InvoiceId, PaymentOptionId } from "../domain/Ids.ts"
import type { PaymentOptionRecord } from "../domain/Invoice.ts"
import { formatAtomic, type Micros, quoteAtomic } from "../domain/Money.ts"
import { bitcoinAddress, evmDepositAddress, solanaReference } from "./Derivation.ts"
import { checksumAddress } from "./EvmAddress.ts"
import { type PaymentMethod, type RailSettings, tokenContractOf } from "./PaymentMethod.ts"
import { forwarderAddress } from "./Forwarders.ts"
import { DECIMALS, EVM_CHAIN_IDS, isEvm } from "./Networks.ts"
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
}

export { bitcoinUri, eip681Uri, solanaPayUri }

const rateText = (rateMicros: bigint) => formatAtomic(rateMicros, 6)

export class OptionBuildError extends Error {}

/**
 * Builds one payment option: addresses, URI, QR code and executable payload. The create path
 * runs it on the payment worker thread (PaymentTasks, kind `options`).
 */
export const buildOption = (
  request: OptionRequest,
  settings: RailSettings
): PaymentOptionRecord & { reference: string | null; derivationIndex: number | null } => {
  const { method } = request
  const decimals = DECIMALS[method.assetCode]
  const quotedAtomic = quoteAtomic(request.amountMicros, request.rateMicros, decimals)
  const requiredConfirmations = settings.confirmations[method.network]
  const tokenContract = method.assetCode === "BTC" ? null : tokenContractOf(settings, method.network, method.assetCode) ?? null
  if (method.assetCode !== "BTC" && tokenContract === null) {
    throw new OptionBuildError(`no token contract configured for ${method.assetCode} on ${method.network}`)
  }
  const base = {
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
  const amountText = formatAtomic(quotedAtomic, decimals)

  if (method.network === "bitcoin") {
    if (method.xpub === null || request.derivationIndex === undefined) throw new OptionBuildError("bitcoin method has no xpub")
    const address = request.knownAddress ?? bitcoinAddress(method.xpub, request.derivationIndex)
    const uri = bitcoinUri(address, quotedAtomic)
    return {
      ...base,
      destinationAddress: address,
      paymentUri: uri,
      qrCode: qrSvg(uri),
      optionPayload: { railType: "address_transfer", requiredConfirmations }
    }
  }

  if (method.network === "solana") {
    if (method.recipientAddress === null || tokenContract === null) throw new OptionBuildError("solana method has no recipient")
    const reference = solanaReference()
    const memo = `${settings.servicePrefix}:${request.invoiceId}:${request.optionId}`
    const uri = solanaPayUri({ recipient: method.recipientAddress, amount: amountText, mint: tokenContract, reference, label: request.label, memo })
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

  if (!isEvm(method.network) || tokenContract === null) throw new OptionBuildError(`unsupported network ${method.network}`)
  const chainId = EVM_CHAIN_IDS[method.network]
  if (method.railType === "wallet_contract") {
    if (method.recipientAddress === null) throw new OptionBuildError("wallet-contract method has no recipient")
    const factory = settings.forwarder.factories[method.network]
    if (factory === undefined) throw new OptionBuildError(`no forwarder factory configured on ${method.network}`)
    const contractAddress = forwarderAddress(factory, request.optionId, checksumAddress(method.recipientAddress))
    return {
      ...base,
      destinationAddress: null,
      paymentUri: null,
      qrCode: null,
      optionPayload: {
        railType: "wallet_contract",
        chainId,
        contractAddress,
        tokenContract,
        recipient: method.recipientAddress,
        decimals,
        requiredConfirmations,
        paymentAmountAtomic: quotedAtomic.toString()
      }
    }
  }
  if (method.xpub === null || request.derivationIndex === undefined) throw new OptionBuildError("address-transfer method has no xpub")
  const address = request.knownAddress ?? evmDepositAddress(method.xpub, request.derivationIndex)
  const uri = eip681Uri(tokenContract, chainId, address, quotedAtomic)
  return {
    ...base,
    destinationAddress: address,
    paymentUri: uri,
    qrCode: qrSvg(uri),
    optionPayload: {
      railType: "address_transfer",
      chainId,
      tokenContract,
      recipient: address,
      decimals,
      requiredConfirmations,
      paymentAmountAtomic: quotedAtomic.toString()
    }
  }
}
