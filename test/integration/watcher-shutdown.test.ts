import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AnvilNode, startAnvil } from "../support/Anvil.ts"
import { type EsploraSimulator, startEsploraSimulator } from "../support/EsploraSimulator.ts"
import { privateDatabase } from "../support/PrivateDatabase.ts"
import { scriptEnv, type ScriptProcess, startScript } from "../support/ScriptProcess.ts"

/**
 * The service as a supervisor runs it, on PostgreSQL with several watched networks: every network
 * is led from the start (none lost to a second lock connection of the same process), and SIGTERM
 * to its one PID ends it within the HTTP server's drain time (NodeHttpServer's default
 * gracefulShutdownTimeout), leaving no session of it behind.
 */
const databaseUrl = process.env.DATABASE_URL
const ready = databaseUrl !== undefined && databaseUrl !== ""
if (!ready) console.log("skipped: SIGTERM with several watched networks (needs DATABASE_URL: the advisory-lock leadership runs on PostgreSQL only)")

const ROOT = join(import.meta.dirname, "..", "..")
const DRAIN_MS = 20_000
const EVM_CHAIN_IDS = { ethereum: 1, base: 8453, arbitrum: 42161 } as const
type EvmNetwork = keyof typeof EVM_CHAIN_IDS

const exitWithin = (service: ScriptProcess, millis: number) =>
  new Promise<boolean>((resolve) => {
    if (service.child.exitCode !== null || service.child.signalCode !== null) return resolve(true)
    const timer = setTimeout(() => resolve(false), millis)
    service.child.once("exit", () => {
      clearTimeout(timer)
      resolve(true)
    })
  })

/** `waiting`, or a failure that shows the service's output after `millis`. */
const within = <A>(millis: number, service: ScriptProcess, waiting: Promise<A>) => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`nothing after ${millis} ms:\n${service.output().slice(-3000)}`)), millis)
  })
  return Promise.race([waiting, late]).finally(() => clearTimeout(timer))
}

describe.skipIf(!ready)("SIGTERM with several watched networks on PostgreSQL", () => {
  let database: Awaited<ReturnType<typeof privateDatabase>>
  let bitcoin: EsploraSimulator
  const nodes = new Map<EvmNetwork, AnvilNode>()

  beforeAll(async () => {
    database = await privateDatabase()
    bitcoin = await startEsploraSimulator()
    bitcoin.mine(3)
    for (const [network, chainId] of Object.entries(EVM_CHAIN_IDS)) nodes.set(network as EvmNetwork, await startAnvil({ chainId }))
  }, 60_000)

  afterAll(async () => {
    for (const node of nodes.values()) await node.stop()
    await bitcoin?.close()
    await database?.drop()
  })

  const cases: ReadonlyArray<{ readonly evm: ReadonlyArray<EvmNetwork>; readonly multiplex: boolean }> = [
    { evm: ["ethereum"], multiplex: true },
    { evm: ["ethereum"], multiplex: false },
    { evm: ["ethereum", "base"], multiplex: true },
    { evm: ["ethereum", "base", "arbitrum"], multiplex: false }
  ]

  for (const { evm, multiplex } of cases) {
    const networks = [...evm, "bitcoin"]
    it(`${networks.length} networks (${networks.join(", ")}; multiplex ${multiplex ? "on" : "off"}): each led from the start, and SIGTERM exits within the drain time`,
      async () => {
        const endpoints = Object.fromEntries(evm.map((network) => [`CHECKOUT_RPC_URL_${network.toUpperCase()}`, nodes.get(network)!.rpcUrl]))
        // startScript puts the service in a process group of its own; SIGTERM below goes to its PID only, as a supervisor's does.
        const service = startScript(join(ROOT, "src", "main.ts"), [], scriptEnv({
          PORT: "0",
          CHECKOUT_ENV: "test",
          CHECKOUT_DEMO: "false",
          CHECKOUT_PRICE_URL: "",
          DATABASE_URL: database.url!,
          CHECKOUT_DB_MULTIPLEX: String(multiplex),
          CHECKOUT_ESPLORA_URL: bitcoin.url,
          ...endpoints
        }))
        try {
          for (const network of networks) await within(30_000, service, service.line(new RegExp(`Leading the chain watcher.*\\b${network}\\b`)))
          // Longer than a lease (6 s by default): a lock left on a second connection of this process
          // would have been taken for a silent leader's and its session terminated by now.
          await new Promise((resolve) => setTimeout(resolve, 7_000))
          expect(service.output()).not.toContain("Terminated the silent chain watcher leader's session")
          expect(service.output()).not.toContain("Lost the chain watchers' leadership connection")
          for (const network of networks) {
            expect(service.output().split("\n").filter((line) => line.includes("Leading the chain watcher") && new RegExp(`\\b${network}\\b`).test(line))).toHaveLength(1)
          }

          service.child.kill("SIGTERM")
          const exited = await exitWithin(service, DRAIN_MS)
          expect(exited, `still running ${DRAIN_MS} ms after SIGTERM:\n${service.output().slice(-3000)}`).toBe(true)
        } finally {
          // A service that outlived the test is killed, with everything it started.
          if (service.child.exitCode === null && service.child.signalCode === null) process.kill(-service.child.pid!, "SIGKILL")
          await service.stop()
        }
      }, 120_000)
  }
})
