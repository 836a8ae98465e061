import { formatAtomic } from "../domain/Money.ts"

/*
 * The payment request URIs of the options (OptionBuilder) and of the refunds (refunds/PaymentRequest.ts),
 * in a module of their own: importing them does not load the address derivation code.
 */

export const bitcoinUri = (address: string, atomic: bigint) => `bitcoin:${address}?amount=${formatAtomic(atomic, 8)}`

export const eip681Uri = (token: string, chainId: number, destination: string, atomic: bigint) => `ethereum:${token}@${chainId}/transfer?address=${destination}&uint256=${atomic}`

export const solanaPayUri = (p: {
  recipient: string
  amount: string
  mint: string
  reference: string
  label: string
  memo: string
}) => `solana:${p.recipient}?amount=${p.amount}&spl-token=${p.mint}&reference=${p.reference}&label=${encodeURIComponent(p.label)}&memo=${encodeURIComponent(p.memo)}`
