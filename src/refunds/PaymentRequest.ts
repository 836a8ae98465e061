import { formatAtomic } from "../domain/Money.ts"
import { bitcoinUri, eip681Uri, solanaPayUri } from "../payments/PaymentUris.ts"
import { EVM_CHAIN_IDS, type EvmNetwork, isEvm, type Network } from "../payments/Networks.ts"
import { qrSvg } from "../payments/QrCode.ts"

export interface RefundPaymentRequest {
  readonly uri: string
  readonly qrCode: string
  readonly recipient: string
  readonly tokenContract: string | null
  readonly reference: string | null
}

/** The parts of a refund (Refund.ts) that its transfer needs: declared here so that the two files do not import each other. */
interface RefundTransfer {
  readonly invoiceId: string
  readonly network: string
  readonly tokenContract: string | null
  readonly decimals: number
  readonly amountAtomic: bigint
  readonly refundAddress: string
  readonly reference: string | null
}

/**
 * The payment request URI of a refund, built by the functions the payment options use (PaymentUris.ts): EIP-681 token
 * transfer (EVM), Solana Pay with the refund's reference (solana), BIP21 (bitcoin).
 */
export const refundUri = (refund: RefundTransfer): string => {
  if (refund.network === "bitcoin") return bitcoinUri(refund.refundAddress, refund.amountAtomic)
  if (refund.network === "solana") {
    return solanaPayUri({
      recipient: refund.refundAddress,
      amount: formatAtomic(refund.amountAtomic, refund.decimals),
      mint: refund.tokenContract ?? "",
      reference: refund.reference ?? "",
      label: "Refund",
      memo: `Refund ${refund.invoiceId}`
    })
  }
  if (!isEvm(refund.network as Network)) throw new Error(`refunds are not supported on ${refund.network}`)
  return eip681Uri(refund.tokenContract ?? "", EVM_CHAIN_IDS[refund.network as EvmNetwork], refund.refundAddress, refund.amountAtomic)
}

/** What the merchant's wallet needs to pay a refund: the URI, its QR code (the options' QR function) and the transfer's parts. */
export const paymentRequestOf = (refund: RefundTransfer): RefundPaymentRequest => {
  const uri = refundUri(refund)
  return { uri, qrCode: qrSvg(uri), recipient: refund.refundAddress, tokenContract: refund.tokenContract, reference: refund.reference }
}
