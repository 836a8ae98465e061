import { readFileSync } from "node:fs"
import type { Abi } from "viem"
import { keccak_256 } from "@noble/hashes/sha3.js"
import { abiEncodeAddress, bytesOf, concatHex, create2Address, create2AddressOfHash, type Hex, keccakHex, ZERO_HASH } from "./EvmAddress.ts"

interface Artifact {
  readonly abi: Abi
  readonly bytecode: Hex
  readonly deployedBytecode: Hex
}

const artifact = (name: string): Artifact => JSON.parse(readFileSync(new URL(`../../contracts/artifacts/${name}.json`, import.meta.url), "utf8")) as Artifact

/** The wallet-contract rail's contracts (contracts/*.sol, compiled by `npm run contracts`). */
export const Forwarder = artifact("Forwarder")
export const ForwarderFactory = artifact("ForwarderFactory")

/**
 * The deterministic deployment proxy (CREATE2 of `salt ++ init code` sent as calldata), present at
 * this address on ethereum, arbitrum, base and most EVM chains. `npm run cli -- evm deploy-factory`
 * deploys the factory through it, so the factory has the same address on every network.
 */
export const CREATE2_DEPLOYER: Hex = "0x4e59b44847b379578588920cA78FbF26c0B4956C"
/** The proxy's runtime code, for local nodes that lack it. */
export const CREATE2_DEPLOYER_CODE: Hex =
  "0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe03601600081602082378035828234f58015156039578182fd5b8082525050506014600cf3"

/** Where `deploy-factory` puts the factory on any chain that has the deployment proxy. */
export const CANONICAL_FACTORY: Hex = create2Address(CREATE2_DEPLOYER, ZERO_HASH, ForwarderFactory.bytecode)

/** The forwarder's init code for a recipient: its creation code with the recipient as constructor argument. */
export const forwarderInitCode = (recipient: Hex): Hex => concatHex([Forwarder.bytecode, abiEncodeAddress(recipient)])

/** Salt of a wallet-contract forwarder: keccak256 of the option id. */
export const forwarderSalt = (optionId: string): Hex => keccakHex(Buffer.from(optionId, "utf8"))

/**
 * keccak256 of each recipient's init code, kept: hashing the 1 kB init code was most of the keccak
 * work of a create with a wallet-contract option, and a merchant has one recipient per network.
 */
const initCodeHashes = new Map<string, Uint8Array>()
const initCodeHashOf = (recipient: Hex): Uint8Array => {
  const key = recipient.toLowerCase()
  let hash = initCodeHashes.get(key)
  if (hash === undefined) {
    hash = keccak_256(bytesOf(forwarderInitCode(recipient)))
    if (initCodeHashes.size >= 10_000) initCodeHashes.clear()
    initCodeHashes.set(key, hash)
  }
  return hash
}

/** The counterfactual address of an option's forwarder: CREATE2 from the network's factory, salt from the option id. */
export const forwarderAddress = (factory: Hex, optionId: string, recipient: Hex): Hex => create2AddressOfHash(factory, forwarderSalt(optionId), initCodeHashOf(recipient))
