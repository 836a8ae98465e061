import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import { type Address, getAddress, parseAbiItem } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ChainWatchers } from "../../src/chains/ChainWatchers.ts"
import { positionsInTransaction } from "../../src/chains/evm/LogPosition.ts"
import { DEMO_KEYS } from "../../src/demo/DemoMerchant.ts"
import { type AnvilNode, startAnvil } from "../support/Anvil.ts"
import { startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import { privateDatabase } from "../support/PrivateDatabase.ts"

const USDC: Address = getAddress("0x00000000000000000000000000000000000a11ce")
const TRANSFER = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)")
const ELSEWHERE: Address = "0x000000000000000000000000000000000000dEaD"

type Step =
  | { readonly kind: "transfer"; readonly to: 0 | 1 | 2; readonly amount: number }
  | { readonly kind: "mine"; readonly blocks: number }
  | { readonly kind: "reorg"; readonly depth: number; readonly reinclude: boolean }
  | { readonly kind: "poll" }

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("transfer" as const), to: fc.constantFrom(0 as const, 1 as const, 2 as const), amount: fc.integer({ min: 1, max: 9 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("mine" as const), blocks: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("reorg" as const), depth: fc.integer({ min: 1, max: 3 }), reinclude: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("poll" as const) }) }
)

let node: AnvilNode
let app: TestApp
let merchant: TestMerchant
let database: Awaited<ReturnType<typeof privateDatabase>>

const poll = () => app.run(Effect.flatMap(ChainWatchers, (watchers) => watchers.poll("ethereum")))

beforeAll(async () => {
  node = await startAnvil({ chainId: 1 })
  await node.installToken(USDC)
  await node.mint(USDC, node.accounts[1], 10n ** 15n)
  database = await privateDatabase()
  app = await startTestApp({}, {
    ...(database.url === undefined ? {} : { DATABASE_URL: database.url }),
    CHECKOUT_RPC_URL_ETHEREUM: node.rpcUrl,
    CHECKOUT_TOKEN_ETHEREUM_USDC: USDC,
    CHECKOUT_CONFIRMATIONS_ETHEREUM: "3"
  })
  merchant = await app.createMerchant({
    methods: [{ network: "ethereum", assetCode: "USDC", railType: "address_transfer", enabled: true, isDefault: true, recipientAddress: null, xpub: DEMO_KEYS.evmXpub }]
  })
  await poll()
}, 120_000)

afterAll(async () => {
  await app?.close()
  await node?.stop()
  await database?.drop()
})

describe("the EVM watcher against random blocks, reorgs and polls", () => {
  it("ends with exactly the canonical chain's transfers as valid evidence: none lost, none counted twice", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 2, maxLength: 14 }), async (steps) => {
        // Fresh invoices each run (large amounts: they stay open), so runs do not see each other's evidence.
        const invoices = await Promise.all([0, 1].map(async () => {
          const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 100_000 } })
          return { id: created.body.id as string, address: getAddress(created.body.paymentOptions[0].destinationAddress) }
        }))
        const startHeight = await node.publicClient.getBlockNumber()
        const sent: Array<`0x${string}`> = []
        for (const action of steps) {
          const head = await node.publicClient.getBlockNumber()
          if (action.kind === "transfer") {
            const to = action.to === 2 ? ELSEWHERE : invoices[action.to].address
            sent.push((await node.transfer(USDC, node.accounts[1], to, BigInt(action.amount) * 1_000_000n)).hash)
          } else if (action.kind === "mine") {
            await node.mine(action.blocks)
          } else if (action.kind === "reorg") {
            const depth = Math.min(action.depth, Number(head - startHeight))
            if (depth === 0) continue
            // Optionally carry the last transfer over into the new branch (mined again in another block).
            await node.reorg(depth, action.reinclude && sent.length > 0 ? [sent[sent.length - 1]] : [])
          } else {
            await poll()
          }
        }
        await poll()

        const head = await node.publicClient.getBlockNumber()
        const all = head <= startHeight ? [] : await node.publicClient.getLogs({ address: USDC, event: TRANSFER, fromBlock: startHeight + 1n, toBlock: head })
        // Evidence identity: the log's position within its transaction among the source's logs.
        const positions = positionsInTransaction(all.map((log) => ({ transactionHash: log.transactionHash!, logIndex: log.logIndex! })))
        const paying = all.flatMap((log, at) => invoices.some((invoice) => invoice.address === log.args.to) ? [{ log, position: positions[at] }] : [])
        const canonical = paying.map(({ log }) => log)
        const expected = paying.map(({ log, position }) => `${log.transactionHash!.toLowerCase()}:${position}:${log.args.value}`).sort()
        const recorded = await app.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql<{ transactionHash: string; outputIndex: number; amountAtomic: string }>`
            SELECT transaction_hash, output_index, amount_atomic::text AS amount_atomic FROM payments
            WHERE invoice_id IN (${invoices[0].id}, ${invoices[1].id}) AND invalidated_at IS NULL`))
        expect(recorded.map((row) => `${row.transactionHash}:${row.outputIndex}:${row.amountAtomic}`).sort()).toEqual(expected)

        for (const invoice of invoices) {
          const paid = canonical.filter((log) => log.args.to === invoice.address).reduce((sum, log) => sum + log.args.value!, 0n)
          const detail = await merchant.api(`/api/checkout/invoices/${invoice.id}`)
          expect(BigInt(Math.round(detail.body.receivedAmountUsd * 1_000_000))).toBe(paid)
        }
      }),
      { numRuns: 40 }
    )
  })
})
