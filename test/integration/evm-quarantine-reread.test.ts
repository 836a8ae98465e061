import { type Address, getAddress } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { AnvilNode } from "../support/Anvil.ts"
import { type EvmEndpoints, startEvmEndpoints, USDC } from "../support/EvmEndpoints.ts"
import type { RpcFront } from "../support/RpcFront.ts"
import type { TestMerchant } from "../support/TestApp.ts"
import { endpointReport, optionsOf, watcherStatus } from "../support/WatcherStatus.ts"

// Three endpoints in front of one anvil: a (preferred), b, c; a quarantine of a few seconds.
const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
const QUARANTINE_MS = 6_000

let node: AnvilNode
let a: RpcFront
let b: RpcFront
let c: RpcFront
let merchant: TestMerchant
let payer: Address
let setup: EvmEndpoints

const poll = () => setup.poll()
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const endpoint = async (front: RpcFront) => endpointReport(await watcherStatus(merchant, "ethereum"), front.url)
const newInvoice = async () => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 5 } })
  return { id: created.body.id as string, address: getAddress(optionsOf(created.body)[0].destinationAddress) }
}
const statusOf = async (id: string) => (await merchant.api(`/api/checkout/invoices/${id}`)).body.status
const word = (value: string | bigint) => `0x${(typeof value === "bigint" ? value.toString(16) : value.slice(2).toLowerCase()).padStart(64, "0")}`

beforeAll(async () => {
  setup = await startEvmEndpoints({
    rpcUrls: (a, b, c) => `${a.url}, ${b.url}, ${c.url}`,
    environment: { CHECKOUT_ENDPOINT_QUARANTINE_MS: String(QUARANTINE_MS) }
  })
  ;({ node, a, b, c, merchant, payer } = setup)
}, 120_000)

afterAll(async () => {
  await setup?.close()
})

describe("an EVM watcher: the blocks read while an endpoint was quarantined are read again from it when it returns", () => {
  it("credits a real payment the two endpoints read meanwhile left out (scan and re-read at depth), once the quarantined one is back", async () => {
    // a invents a transfer in a real block: b and c deny it, a is quarantined (disagreeing).
    const victim = await newInvoice()
    const real = await node.transfer(USDC, payer, (await newInvoice()).address, 5_000_000n)
    a.inventLogs.push({
      address: USDC.toLowerCase(),
      topics: [TRANSFER_TOPIC, word(payer), word(victim.address)],
      data: word(5_000_000n),
      blockNumber: `0x${real.blockNumber.toString(16)}`,
      blockHash: real.blockHash,
      transactionHash: `0x${"e".repeat(64)}`,
      transactionIndex: "0x7",
      logIndex: "0x70",
      removed: false
    })
    for (let attempt = 0; attempt < 3; attempt++) await poll()
    a.inventLogs.length = 0
    expect(await endpoint(a)).toMatchObject({ state: "disagreeing", refusedTransfers: 1 })

    // While a is out, b (read from) and c (the re-read at depth) both leave a real payment out.
    const invoice = await newInvoice()
    for (const front of [b, c]) front.hideAddresses.push(invoice.address.toLowerCase())
    await node.transfer(USDC, payer, invoice.address, 5_000_000n)
    for (let round = 0; round < 4; round++) {
      await node.mine(1)
      await poll()
    }
    expect(await statusOf(invoice.id)).toBe("awaiting_payment")
    expect(await statusOf(victim.id)).toBe("awaiting_payment")
    expect((await endpoint(a)).state).toBe("disagreeing")
    for (const front of [b, c]) front.hideAddresses.length = 0

    // The quarantine ends: the range is read from a, the payment corroborated by b and c, credited.
    const deadline = Date.now() + QUARANTINE_MS + 30_000
    while ((await statusOf(invoice.id)) !== "confirmed") {
      if (Date.now() > deadline) throw new Error("the payment was not credited")
      await sleep(500)
      await node.mine(1)
      await poll()
    }
    expect(await statusOf(victim.id)).toBe("awaiting_payment")
    expect(await endpoint(a)).toMatchObject({ state: "healthy", refusedTransfers: 1 })
  })
})
