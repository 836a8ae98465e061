import { execFileSync } from "node:child_process"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const ROOT = join(import.meta.dirname, "..", "..")

/** Packages whose code loads in a fresh Node process that imports the given module of ours (nothing started). */
const packagesLoadedBy = (module: string): Array<string> => {
  const script = `
import { registerHooks } from "node:module"
const loaded = new Set()
registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context)
    const inPackage = resolved.url.split("/node_modules/").at(-1)
    if (resolved.url.includes("/node_modules/")) {
      const parts = inPackage.split("/")
      loaded.add(parts[0].startsWith("@") ? parts[0] + "/" + parts[1] : parts[0])
    }
    return resolved
  }
})
await import(${JSON.stringify(join(ROOT, module))})
console.log(JSON.stringify([...loaded].sort()))
`
  const output = execFileSync(join(ROOT, "node_modules", ".bin", "node"), ["--experimental-strip-types", "--disable-warning=ExperimentalWarning", "--input-type=module", "-e",
    script], {
    cwd: ROOT,
    encoding: "utf8"
  })
  return JSON.parse(output.trim().split("\n").at(-1)!) as Array<string>
}

/** Loaded only for a configured network or on first use (docs/decisions.md, Footprint). */
const ON_DEMAND = ["viem", "@solana/web3.js", "@solana/spl-token", "@solana/pay", "@scure/btc-signer", "undici", "jose", "tiny-secp256k1"]

describe("what loads at start", () => {
  it("the service loads no chain client library, HTTP client, JWT library or libsecp256k1 until one is needed", () => {
    const loaded = packagesLoadedBy("src/App.ts")
    // Not vacuous: the composition does load its framework and database driver.
    expect(loaded).toEqual(expect.arrayContaining(["effect", "@effect/sql-pg", "xstate"]))
    expect(loaded.filter((name) => ON_DEMAND.includes(name))).toEqual([])
  }, 30_000)

  it("the payment worker thread loads libsecp256k1 but neither viem nor the Solana libraries", () => {
    const loaded = packagesLoadedBy("src/payments/PaymentWorkerThread.ts")
    expect(loaded).toEqual(expect.arrayContaining(["@scure/bip32", "@noble/hashes", "tiny-secp256k1"]))
    expect(loaded.filter((name) => ON_DEMAND.includes(name) && name !== "tiny-secp256k1")).toEqual([])
  }, 30_000)
})
