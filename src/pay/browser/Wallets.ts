/// <reference lib="dom" />
import { getWallets } from "@wallet-standard/app"
import { base58 } from "@scure/base"
import { getAddress, toHex } from "viem"

/**
 * The browser wallets the page can use: an EIP-1193 provider (EIP-6963 discovery, else the
 * injected window.ethereum) and Solana wallet-standard wallets. Used to pay (main.ts) and to sign a
 * refund request with the paying wallet (Refunds.ts, issue #52).
 */

// Listening from the start, so that wallets registering later are seen too.
export const wallets = getWallets()

export interface Eip1193 {
  request: (args: { method: string; params?: unknown }) => Promise<unknown>
}

/** EIP-6963 discovery, falling back to the injected window.ethereum. */
export const evmProvider = (): Promise<Eip1193 | undefined> =>
  new Promise((resolve) => {
    const found: Array<Eip1193> = []
    const onAnnounce = (event: Event) => found.push((event as CustomEvent<{ provider: Eip1193 }>).detail.provider)
    window.addEventListener("eip6963:announceProvider", onAnnounce)
    window.dispatchEvent(new Event("eip6963:requestProvider"))
    setTimeout(() => {
      window.removeEventListener("eip6963:announceProvider", onAnnounce)
      resolve(found[0] ?? (window as unknown as { ethereum?: Eip1193 }).ethereum)
    }, 300)
  })

type SolanaAccount = { readonly publicKey: Uint8Array }
type SignMessage = { signMessage: (input: { account: SolanaAccount; message: Uint8Array }) => Promise<ReadonlyArray<{ signature: Uint8Array }>> }
type Connect = { connect: () => Promise<{ accounts: ReadonlyArray<SolanaAccount> }> }

const solanaSigner = () => wallets.get().find((wallet) => "solana:signMessage" in wallet.features && "standard:connect" in wallet.features)

const EVM = new Set(["ethereum", "arbitrum", "base"])

/** Whether a wallet that can sign a message of this network is in the browser. */
export const canSign = async (network: string): Promise<boolean> => network === "solana" ? solanaSigner() !== undefined : EVM.has(network) && (await evmProvider()) !== undefined

/** A refund address as the server stores it (EVM checksummed), so that the signed text is the server's. */
export const canonicalAddress = (network: string, address: string): string => {
  if (!EVM.has(network)) return address
  try {
    return getAddress(address)
  } catch {
    return address
  }
}

/** The connected wallet's signature of `message`: EIP-191 personal_sign, or Solana signMessage (base58) with the signer. */
export const signWithWallet = async (network: string, message: string): Promise<{ signature: string; signer: string }> => {
  if (network === "solana") {
    const wallet = solanaSigner()
    if (wallet === undefined) throw new Error("no Solana wallet")
    const { accounts } = await (wallet.features["standard:connect"] as Connect).connect()
    const account = accounts[0]
    const [signed] = await (wallet.features["solana:signMessage"] as SignMessage).signMessage({ account, message: new TextEncoder().encode(message) })
    return { signature: base58.encode(signed.signature), signer: base58.encode(account.publicKey) }
  }
  const provider = await evmProvider()
  if (provider === undefined) throw new Error("no wallet")
  const [from] = (await provider.request({ method: "eth_requestAccounts" })) as Array<string>
  const signature = await provider.request({ method: "personal_sign", params: [toHex(message), from] })
  return { signature: String(signature), signer: from }
}
