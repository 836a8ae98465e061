import { Keypair, type PublicKey } from "@solana/web3.js"
import { Effect } from "effect"
import { ChainWatchers } from "../../src/chains/ChainWatchers.ts"
import { buildTransferTransaction } from "../../src/chains/solana/SolanaTransfer.ts"
import type { AppConfigShape } from "../../src/config/AppConfig.ts"
import { DEMO_KEYS } from "../../src/demo/DemoMerchant.ts"
import type { MethodInput } from "../../src/payments/CheckoutSettingsRepo.ts"
import { privateDatabase } from "./PrivateDatabase.ts"
import { signPrepared, type SolanaNode, startSolanaNode } from "./SolanaRpc.ts"
import { startTestApp, type TestApp } from "./TestApp.ts"
import { freshZpub } from "./TestLayers.ts"

// What the chain suites (a watcher against anvil, the litesvm server or the Esplora simulator)
// share: polling the watcher, pointing the app at the suite's private database, the merchant's
// payment method on the chain, and Solana wallets that pay.

/** A chain suite's app on a private database of its own (see privateDatabase), `env` pointing it at the suite's chain; closing the app drops the database. */
export const startChainApp = async (overrides: Partial<AppConfigShape>, env: Readonly<Record<string, string>>): Promise<TestApp> => {
  const database = await privateDatabase()
  const app = await startTestApp(overrides, { ...databaseEnv(database), ...env }).catch(async (error: unknown) => {
    await database.drop()
    throw error
  })
  return {
    ...app,
    close: async () => {
      await app.close()
      await database.drop()
    }
  }
}

/** A litesvm node with a 6-decimal mint at each of the addresses. */
export const startSolanaWithMints = async (...mints: ReadonlyArray<PublicKey>) => {
  const node = await startSolanaNode()
  const authority = Keypair.generate().publicKey
  for (const mint of mints) node.installMint(mint, 6, authority)
  return node
}

/** One poll of `network`'s watcher. */
export const pollWatcher = (app: TestApp, network: string) => app.run(Effect.flatMap(ChainWatchers, (watchers) => watchers.poll(network)))

/** Polls `network`'s watcher until it has processed up to the head it saw. */
export const pollWatcherToHead = async (app: TestApp, network: string) => {
  for (;;) {
    const report = await pollWatcher(app, network)
    if (report.processedHeight === report.headHeight) return report
  }
}

/** The environment that points the app at the suite's private database (none when it runs on PGlite). */
export const databaseEnv = (database: { readonly url: string | undefined }): Record<string, string> => database.url === undefined ? {} : { DATABASE_URL: database.url }

/** USDC on solana to a fixed recipient (a fresh one unless given), the default method. */
export const solanaUsdcMethod = (recipient: PublicKey = Keypair.generate().publicKey): MethodInput => ({
  network: "solana",
  assetCode: "USDC",
  railType: "address_transfer",
  enabled: true,
  isDefault: true,
  recipientAddress: recipient.toBase58(),
  xpub: null
})

/** USDC on ethereum to addresses derived from the demo xpub, the default method. */
export const ethereumUsdcMethod: MethodInput = {
  network: "ethereum",
  assetCode: "USDC",
  railType: "address_transfer",
  enabled: true,
  isDefault: true,
  recipientAddress: null,
  xpub: DEMO_KEYS.evmXpub
}

/** BTC to addresses derived from a fresh zpub, the default method. */
export const bitcoinMethod = (): MethodInput => ({
  network: "bitcoin",
  assetCode: "BTC",
  railType: "address_transfer",
  enabled: true,
  isDefault: true,
  recipientAddress: null,
  xpub: freshZpub()
})

/** A Solana wallet with 1 SOL for fees and `tokens` of each of the mints. */
export const fundedSolanaWallet = (node: SolanaNode, mints: ReadonlyArray<PublicKey>, tokens: bigint) => {
  const wallet = Keypair.generate()
  node.airdrop(wallet.publicKey, 1_000_000_000n)
  for (const mint of mints) node.setTokenBalance(wallet.publicKey, mint, tokens)
  return wallet
}

/** Signs a prepared transaction (base64, as the prepare endpoints return it) with the wallet's key and sends it; its signature. */
export const sendPrepared = (node: SolanaNode, base64: string, wallet: Keypair) => node.connection.sendRawTransaction(signPrepared(base64, wallet).serialize())

/** A transfer as a wallet sends it (the recipient's token account created if missing, the reference as a read-only key), signed and executed; its signature. */
export const sendSolanaTransfer = (
  node: SolanaNode,
  from: Keypair,
  transfer: { readonly recipient: PublicKey; readonly mint: PublicKey; readonly amountAtomic: bigint; readonly reference: PublicKey; readonly memo: string }
) => {
  const transaction = buildTransferTransaction({
    payer: from.publicKey,
    ...transfer,
    decimals: 6,
    blockhash: node.svm.latestBlockhash(),
    lastValidBlockHeight: node.slot() + 150
  })
  transaction.sign(from)
  return node.execute(transaction)
}
