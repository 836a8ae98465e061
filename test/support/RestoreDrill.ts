import { HDKey } from "@scure/bip32"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { type Address, getAddress } from "viem"
import { expect } from "vitest"
import type { AppConfigShape } from "../../src/config/AppConfig.ts"
import { type AnvilNode, startAnvil, TEST_TOKENS } from "./Anvil.ts"
import { pollWatcherToHead } from "./ChainSuites.ts"
import { publicRequest, startTestApp, type TestApp, type TestMerchant } from "./TestApp.ts"
import { webhookHarness } from "./WebhookHarness.ts"
import { startWebhookReceiver, type WebhookReceiver } from "./WebhookReceiver.ts"
import type { PaymentJson } from "./Answers.ts"

// Issue #56's backup-and-restore drill, for PostgreSQL (pg_dump/pg_restore) and the embedded
// database (`npm run cli -- data backup|restore`): invoices are paid before, during and after
// the backup; the restored database's service finds every payment made since the backup again
// (its watcher cursor went back with it), credits none twice, and each webhook event reaches the
// receiver at least once under one X-Checkout-Delivery id.

const { USDC } = TEST_TOKENS

/** How a drill takes and restores its backup. */
export interface BackupStore {
  /** The app on the database the drill starts on. */
  readonly startOriginal: (env: Record<string, string>) => Promise<TestApp>
  /** Takes the backup while `paying` runs; answers the app to keep paying on (the embedded one stops and starts again). */
  readonly backup: (app: TestApp, paying: () => Promise<void>, env: Record<string, string>) => Promise<TestApp>
  /** The app on a database restored from the backup (the original app is closed). */
  readonly startRestored: (env: Record<string, string>) => Promise<TestApp>
}

const usdc = (amount: number) => BigInt(Math.round(amount * 1_000_000))

const apiOf = (app: TestApp, merchant: TestMerchant) => async (path: string, body?: unknown) => {
  const init = body === undefined ? {} : { method: "POST", body: JSON.stringify(body) }
  return publicRequest(app.baseUrl, path, { ...init, headers: { "content-type": "application/json", "x-api-key": merchant.apiKey } })
}

const cursorOf = async (app: TestApp) => {
  const rows = await app.run(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ processedHeight: string }>`SELECT processed_height::text AS processed_height FROM chain_cursors WHERE network = 'ethereum'`)
  )
  return Number(rows[0]!.processedHeight)
}

/** What the merchant's API says of each invoice: status, amount received and the transactions credited. */
const ledgerOf = async (app: TestApp, merchant: TestMerchant, ids: ReadonlyArray<string>) => {
  const api = apiOf(app, merchant)
  return Promise.all(ids.map(async (id) => {
    const { body } = await api(`/api/checkout/invoices/${id}`)
    const payments = (body.payments as ReadonlyArray<PaymentJson>).map((payment) => payment.transactionHash).sort()
    return { id, status: body.status, receivedAmountUsd: body.receivedAmountUsd, payments }
  }))
}

/** Every (invoice, event) the receiver got, with the distinct X-Checkout-Delivery ids it came under. */
const eventsReceived = (receiver: WebhookReceiver, path: string) => {
  const ids = new Map<string, Set<string>>()
  for (const request of receiver.received(path)) {
    const key = `${JSON.parse(request.body).invoice.id}/${String(request.headers["x-checkout-event"])}`
    ids.set(key, (ids.get(key) ?? new Set()).add(String(request.headers["x-checkout-delivery"])))
  }
  return ids
}

export const runRestoreDrill = async (store: BackupStore) => {
  const ethereum: AnvilNode = await startAnvil({ chainId: 1 })
  const receiver = await startWebhookReceiver()
  const apps: Array<TestApp> = []
  try {
    await ethereum.installToken(USDC)
    const payer = ethereum.accounts[1]!
    await ethereum.mint(USDC, payer, usdc(1_000))
    const env = { CHECKOUT_RPC_URL_ETHEREUM: ethereum.rpcUrl, CHECKOUT_TOKEN_ETHEREUM_USDC: USDC, CHECKOUT_CONFIRMATIONS_ETHEREUM: "2" }
    let app = await store.startOriginal(env)
    apps.push(app)
    await pollWatcherToHead(app, "ethereum")
    const xpub = HDKey.fromMasterSeed(crypto.getRandomValues(new Uint8Array(32))).derive("m/44'/60'/0'").publicExtendedKey
    const merchant = await app.createMerchant({
      methods: [{ network: "ethereum", assetCode: "USDC", railType: "address_transfer", enabled: true, isDefault: true, recipientAddress: null, xpub }]
    })
    const path = `/hooks/${crypto.randomUUID()}`
    receiver.on(path, (response) => response.writeHead(200).end())
    await webhookHarness(app).configure(merchant, receiver.url(path))
    const invoices: Array<{ id: string; address: Address }> = []
    for (const amountUsd of [3, 4, 5, 6]) {
      const { body } = await apiOf(app, merchant)("/api/checkout/invoices", { amountUsd })
      invoices.push({ id: body.id, address: getAddress(body.paymentOptions[0].destinationAddress) })
    }
    const pay = (index: number, amountUsd: number) => ethereum.transfer(USDC, payer, invoices[index]!.address, usdc(amountUsd))
    const settle = async (on: TestApp) => {
      await ethereum.mine(2)
      await pollWatcherToHead(on, "ethereum")
      await webhookHarness(on).runOnce()
    }

    // Before the backup: invoice 0 paid, seen and confirmed.
    await pay(0, 3)
    await settle(app)
    // During: invoice 1 is paid and the watcher works while the backup is taken.
    await pay(1, 4)
    const during = app
    app = await store.backup(app, async () => {
      await pollWatcherToHead(during, "ethereum")
    }, env)
    apps.push(app)
    // After: invoice 1 confirms, invoice 2 is paid in two parts, invoice 3 in one.
    await pay(2, 2)
    await settle(app)
    await pay(2, 3)
    await pay(3, 6)
    await settle(app)
    const ids = invoices.map((invoice) => invoice.id)
    const before = await ledgerOf(app, merchant, ids)
    expect(before.map((invoice) => invoice.status)).toEqual(["confirmed", "confirmed", "confirmed", "confirmed"])
    const cursorBefore = await cursorOf(app)
    const receivedBefore = eventsReceived(receiver, path)
    const requestsBefore = receiver.received(path).length
    await app.close()

    const restored = await store.startRestored(env)
    apps.push(restored)
    // The cursor went back with the restore: the watcher scans the blocks since the backup again.
    expect(await cursorOf(restored)).toBeLessThan(cursorBefore)
    await settle(restored)
    await settle(restored)
    expect(await ledgerOf(restored, merchant, ids)).toEqual(before)
    expect((await ledgerOf(restored, merchant, ids)).map((invoice) => invoice.payments.length)).toEqual([1, 1, 2, 1])

    const received = eventsReceived(receiver, path)
    expect([...received.keys()].sort()).toEqual([...receivedBefore.keys()].sort())
    for (const [event, deliveryIds] of received) expect({ event, deliveryIds: deliveryIds.size }).toEqual({ event, deliveryIds: 1 })
    // Events were sent again after the restore, each under the id the receiver saw it under before.
    expect(receiver.received(path).length).toBeGreaterThan(requestsBefore)
  } finally {
    for (const app of apps) await app.close().catch(() => undefined)
    await receiver.close()
    await ethereum.stop()
  }
}

/** The app of a drill: test configuration over `overrides`, chain settings in `env`. */
export const drillApp = (overrides: Partial<AppConfigShape>, env: Record<string, string>) => startTestApp(overrides, env)
