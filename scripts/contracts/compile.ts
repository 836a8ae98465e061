import { readdirSync, readFileSync } from "node:fs"
import { basename, join } from "node:path"
import solc from "solc"

export const CONTRACTS_DIR = join(import.meta.dirname, "..", "..", "contracts")
export const ARTIFACTS_DIR = join(CONTRACTS_DIR, "artifacts")

export interface Artifact {
  readonly contractName: string
  readonly abi: ReadonlyArray<unknown>
  readonly bytecode: `0x${string}`
  readonly deployedBytecode: `0x${string}`
}

interface SolcOutput {
  readonly errors?: ReadonlyArray<{ readonly severity: string; readonly formattedMessage: string }>
  readonly contracts?: Record<string, Record<string, { abi: Array<unknown>; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>>
}

export const solidityFiles = (): ReadonlyArray<string> => readdirSync(CONTRACTS_DIR).filter((file) => file.endsWith(".sol")).sort()

/**
 * Compiles every contracts/*.sol with the pinned solc-js (standard JSON) and returns, per file, the
 * contract of the same name. No metadata hash or CBOR trailer, so the bytes depend only on the code
 * and these settings, never on paths or comments.
 */
export const compileContracts = (): ReadonlyArray<Artifact> => {
  const input = {
    language: "Solidity",
    sources: Object.fromEntries(solidityFiles().map((file) => [file, { content: readFileSync(join(CONTRACTS_DIR, file), "utf8") }])),
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: "cancun",
      metadata: { bytecodeHash: "none", appendCBOR: false },
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } }
    }
  }
  const compile: (input: string) => string = solc.compile
  const output = JSON.parse(compile(JSON.stringify(input))) as SolcOutput
  const errors = (output.errors ?? []).filter((error) => error.severity === "error")
  if (errors.length > 0) throw new Error(errors.map((error) => error.formattedMessage).join("\n"))
  return Object.entries(output.contracts ?? {}).flatMap(([file, contracts]) =>
    Object.entries(contracts)
      .filter(([name]) => name === basename(file, ".sol"))
      .map(([contractName, contract]) => ({
        contractName,
        abi: contract.abi,
        bytecode: `0x${contract.evm.bytecode.object}` as const,
        deployedBytecode: `0x${contract.evm.deployedBytecode.object}` as const
      }))
  )
}

/** The artifact file's exact text: keys in the order above, two-space indent, final newline. */
export const artifactJson = (artifact: Artifact): string => `${JSON.stringify(artifact, null, 2)}\n`
