/** A network's usual time between blocks, in seconds (what a payer waits per confirmation). */
const BLOCK_SECONDS: Readonly<Record<string, number>> = { ethereum: 12, arbitrum: 1, base: 2, solana: 0.4, bitcoin: 600 }

/** About how many minutes `required` confirmations usually take on `network` (at least one). */
export const usualConfirmationMinutes = (network: string, required: number) => Math.max(1, Math.ceil((required * (BLOCK_SECONDS[network] ?? 12)) / 60))
