/**
 * The text a payer signs to vouch for a refund request (issue #52), plain lines in the manner of
 * EIP-4361: the service, the invoice, the payment option and the refund address, so that a
 * signature cannot be replayed for another invoice, option or address. No imports: the payment
 * page's script builds the same text.
 */
export interface RefundMessageParts {
  /** The service's host (CHECKOUT_PUBLIC_URL's), as the payment page shows it. */
  readonly domain: string
  readonly invoiceId: string
  readonly paymentOptionId: string
  readonly refundAddress: string
}

export const refundMessage = ({ domain, invoiceId, paymentOptionId, refundAddress }: RefundMessageParts): string =>
  [
    `${domain} asks you to confirm a refund request.`,
    "",
    "I paid this invoice and ask for its refund to be sent to the address below.",
    "",
    `Invoice: ${invoiceId}`,
    `Payment option: ${paymentOptionId}`,
    `Refund address: ${refundAddress}`
  ].join("\n")

export const isEvmNetwork = (network: string) => network === "ethereum" || network === "arbitrum" || network === "base"

/** Two addresses of one network are the same (EVM ignores the checksum's letter case). */
export const sameAddress = (network: string, a: string, b: string): boolean => isEvmNetwork(network) ? a.toLowerCase() === b.toLowerCase() : a === b
