import { type Address, getAddress, parseAbi, parseAbiItem } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AnvilNode, startAnvil } from "../support/Anvil.ts"

const TOKEN = getAddress("0x00000000000000000000000000000000000a11ce")
const NO_RETURN_TOKEN = getAddress("0x000000000000000000000000000000000000da17")
const TRANSFER = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)")
const READ = parseAbi([
  "function balanceOf(address) view returns (uint256)",
  "function totalSupply() view returns (uint256)",
  "function decimals() view returns (uint8)",
  "function symbol() view returns (string)"
])

let node: AnvilNode
let payer: Address
let payee: Address

const transferLogs = (blockNumber: bigint) => node.publicClient.getLogs({ address: TOKEN, event: TRANSFER, fromBlock: blockNumber, toBlock: blockNumber })
const balanceOf = (token: Address, owner: Address) => node.publicClient.readContract({ address: token, abi: READ, functionName: "balanceOf", args: [owner] })

beforeAll(async () => {
  node = await startAnvil({ chainId: 1 })
  ;[, payer, payee] = node.accounts
  await node.installToken(TOKEN)
  await node.installToken(NO_RETURN_TOKEN, "noReturn")
  await node.mint(TOKEN, payer, 1_000_000_000n)
  await node.mint(NO_RETURN_TOKEN, payer, 1_000_000_000n)
})

afterAll(async () => {
  await node?.stop()
})

describe("the anvil harness", () => {
  it("runs a chain with the given id and the test token at a fixed address", async () => {
    expect(node.rpcUrl).toBe(`http://127.0.0.1:${node.port}`)
    expect(await node.publicClient.getChainId()).toBe(1)
    expect(node.accounts).toHaveLength(10)
    expect(await node.publicClient.readContract({ address: TOKEN, abi: READ, functionName: "decimals" })).toBe(6)
    expect(await node.publicClient.readContract({ address: TOKEN, abi: READ, functionName: "symbol" })).toBe("TUSD")
    expect(await node.publicClient.readContract({ address: TOKEN, abi: READ, functionName: "totalSupply" })).toBe(1_000_000_000n)
  })

  it("mines each transaction in a block of its own, timed as asked", async () => {
    const head = await node.publicClient.getBlock()
    const at = head.timestamp + 600n
    await node.setNextBlockTimestamp(at)
    const first = await node.transfer(TOKEN, payer, payee, 1n)
    const second = await node.transfer(TOKEN, payer, payee, 1n)
    expect(first.blockNumber).toBe(head.number + 1n)
    expect(second.blockNumber).toBe(head.number + 2n)
    expect((await node.publicClient.getBlock({ blockNumber: first.blockNumber })).timestamp).toBe(at)
    expect((await node.publicClient.getBlock({ blockNumber: second.blockNumber })).timestamp).toBeGreaterThanOrEqual(at)
  })

  it("moves tokens and logs the Transfer where it says", async () => {
    const before = await balanceOf(TOKEN, payee)
    const sent = await node.transfer(TOKEN, payer, payee, 2_500_000n)
    expect(await balanceOf(TOKEN, payee)).toBe(before + 2_500_000n)
    const [log] = await transferLogs(sent.blockNumber)
    expect(log).toMatchObject({
      transactionHash: sent.hash,
      blockHash: sent.blockHash,
      logIndex: sent.logIndex,
      args: { from: payer, to: payee, value: 2_500_000n }
    })
  })

  it("reorganises a transfer away, then mines the same transaction again in another block", async () => {
    await node.mine(2) // so that the reorgs below replace only empty blocks besides the transfer's
    const before = await balanceOf(TOKEN, payee)
    const sent = await node.transfer(TOKEN, payer, payee, 7n)
    const head = await node.publicClient.getBlockNumber()
    expect(head).toBe(sent.blockNumber)

    await node.reorg(1)
    expect(await node.publicClient.getBlockNumber()).toBe(head)
    const replaced = await node.publicClient.getBlock({ blockNumber: head })
    expect(replaced.hash).not.toBe(sent.blockHash)
    expect(replaced.transactions).toEqual([])
    expect(await transferLogs(head)).toEqual([])
    expect(await node.publicClient.getTransactionReceipt({ hash: sent.hash }).catch(() => null)).toBeNull()
    expect(await balanceOf(TOKEN, payee)).toBe(before)

    // Two blocks replaced; the transfer lands in the second new one.
    await node.reorg(2, [{ hash: sent.hash, blockOffset: 1 }])
    const receipt = await node.publicClient.getTransactionReceipt({ hash: sent.hash })
    expect(receipt.blockNumber).toBe(head)
    expect(receipt.blockHash).not.toBe(sent.blockHash)
    expect(receipt.blockHash).not.toBe(replaced.hash)
    expect((await node.publicClient.getBlock({ blockNumber: head - 1n })).transactions).toEqual([])
    expect((await transferLogs(head)).map((log) => log.transactionHash)).toEqual([sent.hash])
    expect(await balanceOf(TOKEN, payee)).toBe(before + 7n)

    // Default offset: the first new block, a height lower than before.
    await node.reorg(2, [sent.hash])
    expect((await node.publicClient.getTransactionReceipt({ hash: sent.hash })).blockNumber).toBe(head - 1n)
    expect(await transferLogs(head)).toEqual([])

    // Still on the chain below the fork: its nonce is taken, so anvil leaves it out.
    await node.reorg(1, [sent.hash])
    expect((await node.publicClient.getTransactionReceipt({ hash: sent.hash })).blockNumber).toBe(head - 1n)
    expect((await node.publicClient.getBlock({ blockNumber: head })).transactions).toEqual([])
  })

  it("transfers the token whose transfer returns nothing", async () => {
    const sent = await node.transfer(NO_RETURN_TOKEN, payer, payee, 3n)
    expect(await balanceOf(NO_RETURN_TOKEN, payee)).toBe(3n)
    const [log] = await node.publicClient.getLogs({ address: NO_RETURN_TOKEN, event: TRANSFER, fromBlock: sent.blockNumber, toBlock: sent.blockNumber })
    expect(log.transactionHash).toBe(sent.hash)
  })

  it("brings a killed node back on its port with its dumped chain", async () => {
    const other = await startAnvil({ chainId: 8453 })
    await other.installToken(TOKEN)
    await other.mint(TOKEN, payer, 5n)
    const head = await other.publicClient.getBlock()
    const state = await other.dumpState()
    await other.kill()
    await expect(other.publicClient.getChainId()).rejects.toThrow()

    const back = await startAnvil({ chainId: 8453, port: other.port, loadState: state })
    try {
      expect(back.rpcUrl).toBe(other.rpcUrl)
      expect(await back.publicClient.getChainId()).toBe(8453)
      expect((await back.publicClient.getBlock()).hash).toBe(head.hash)
      expect(await back.publicClient.readContract({ address: TOKEN, abi: READ, functionName: "balanceOf", args: [payer] })).toBe(5n)
    } finally {
      await back.stop()
    }
  })
})
