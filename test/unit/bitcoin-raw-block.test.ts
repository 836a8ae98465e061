import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parseBlockOutputs } from "../../src/chains/bitcoin/RawBlock.ts"
import { type EsploraSimulator, startEsploraSimulator } from "../support/EsploraSimulator.ts"
import { withoutTransactions } from "../support/RpcFront.ts"

// A real block built by the Esplora simulator: a coinbase and two payments (an odd merkle level).
const PAYEE = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
const OTHER = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"
let esplora: EsploraSimulator
let hash: string
let raw: Uint8Array
let payment: string

beforeAll(async () => {
  esplora = await startEsploraSimulator()
  esplora.mine(2)
  payment = esplora.pay([{ address: PAYEE, sats: 12_345n }])
  esplora.pay([{ address: OTHER, sats: 777n }])
  ;[hash] = esplora.mine(1)
  raw = new Uint8Array(await (await fetch(`${esplora.url}/block/${hash}/raw`)).arrayBuffer())
})

afterAll(() => esplora?.close())

describe("a raw bitcoin block is checked against its header before its outputs are read", () => {
  it("reads the outputs of a block whose header hash and merkle root match", () => {
    const outputs = parseBlockOutputs(raw, hash)
    expect(outputs).toContainEqual({ txid: payment, index: 0, address: PAYEE, value: 12_345n })
    expect(outputs.some((output) => output.address === OTHER)).toBe(true)
  })

  it("refuses a block with a transaction left out: the merkle root no longer matches", () => {
    expect(() => parseBlockOutputs(withoutTransactions(raw, [payment]), hash)).toThrow(/merkle root/)
  })

  it("refuses a block whose output was altered (the txid, so the root, changes)", () => {
    const tampered = Uint8Array.from(raw)
    const at = Buffer.from(tampered).indexOf(Buffer.from(new BigUint64Array([12_345n]).buffer))
    expect(at).toBeGreaterThan(80)
    tampered[at] ^= 1
    expect(() => parseBlockOutputs(tampered, hash)).toThrow(/merkle root/)
  })

  it("refuses another block than the one asked for", () => {
    expect(() => parseBlockOutputs(raw, "0".repeat(64))).toThrow(/hashes to/)
    expect(() => parseBlockOutputs(raw.subarray(0, 40), hash)).toThrow(/header/)
  })
})
