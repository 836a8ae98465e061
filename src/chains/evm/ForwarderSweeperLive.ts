import { Clock, Effect, Redacted } from "effect"
import { createPublicClient, createWalletClient, erc20Abi, getAddress, type Hash, type Hex, http } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { AppConfig } from "../../config/AppConfig.ts"
import { ForwarderFactory, forwarderSalt } from "../../payments/Forwarders.ts"
import { EVM_CHAIN_IDS, EVM_NETWORKS, type EvmNetwork } from "../../payments/Networks.ts"
import { RailSettings } from "../../payments/RailSettings.ts"
import { type DuePayment, ForwarderSweepRepo } from "./ForwarderSweepRepo.ts"

const messageOf = (error: unknown) => error instanceof Error ? (error as Error & { shortMessage?: string }).shortMessage ?? error.message : String(error)

/** 5 s, 10 s, 20 s ... at most 10 minutes between a failed sweep's attempts. */
const retryDelayMillis = (attempts: number) => Math.min(5_000 * 2 ** Math.max(0, attempts - 1), 600_000)

/** ForwarderSweeper's implementation, loaded with viem when a network has an endpoint and a factory. */
export const makeForwarderSweeper = Effect.gen(function*() {
  const config = yield* AppConfig
  const rails = yield* RailSettings
  const repo = yield* ForwarderSweepRepo
  const key = config.chains.evmRelayerKey
  const networks = EVM_NETWORKS.filter((network) => key !== undefined && config.chains.endpoints[network] !== undefined && rails.forwarder.factories[network] !== undefined)
  const account = key === undefined ? undefined : privateKeyToAccount(Redacted.value(key) as Hex)

  // Production never hands out forwarder addresses of a factory that is not there.
  if (config.env === "production") {
    for (const network of EVM_NETWORKS) {
      const factory = rails.forwarder.factories[network]
      const endpoint = config.chains.endpoints[network]
      if (factory === undefined || endpoint === undefined) continue
      const client = createPublicClient({ transport: http(endpoint, { timeout: config.chains.rpcTimeoutMs, retryCount: 1 }) })
      const code = yield* Effect.tryPromise(() => client.getCode({ address: factory })).pipe(
        Effect.mapError((error) => new Error(`CHECKOUT_FORWARDER_FACTORY_${network.toUpperCase()}: could not read its code on ${network}: ${messageOf(error.cause)}`)),
        Effect.orDie
      )
      if (code === undefined || code === "0x") {
        return yield* Effect.die(
          new Error(
            `CHECKOUT_FORWARDER_FACTORY_${network.toUpperCase()} (${factory}) has no code on ${network}: deploy it with npm run cli -- evm deploy-factory --network ${network}`
          )
        )
      }
    }
  }

  const clients = new Map(networks.map((network) => {
    const transport = http(config.chains.endpoints[network]!, { timeout: config.chains.rpcTimeoutMs, retryCount: 0 })
    const chain = {
      id: EVM_CHAIN_IDS[network],
      name: network,
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [config.chains.endpoints[network]!] } }
    }
    return [network, { read: createPublicClient({ transport, chain, cacheTime: 0 }), write: createWalletClient({ transport, chain, account: account! }) }]
  }))

  const ids = (payments: ReadonlyArray<DuePayment>) => payments.map((payment) => payment.paymentId)
  const markSent = (payments: ReadonlyArray<DuePayment>, hash: Hash) => repo.markSent(ids(payments), hash)
  const markSwept = (payments: ReadonlyArray<DuePayment>, now: Date) => repo.markSwept(ids(payments), now)
  const markFailed = (payments: ReadonlyArray<DuePayment>, error: string, now: Date) => {
    const attempts = Math.max(...payments.map((payment) => payment.sweepAttempts)) + 1
    return repo.markFailed(ids(payments), {
      attempts,
      error: error.slice(0, 1000),
      nextAttemptAt: new Date(now.getTime() + retryDelayMillis(attempts))
    })
  }

  const sweepForwarder = (network: EvmNetwork, payments: ReadonlyArray<DuePayment>, now: Date) =>
    Effect.gen(function*() {
      const { read, write } = clients.get(network)!
      const first = payments[0]
      const forwarder = getAddress(first.contractAddress)
      const token = getAddress(first.tokenContract)
      const inFlight = payments.filter((payment) => payment.sweepStatus === "sent")
      if (inFlight.length > 0) {
        const hash = inFlight[0].sweepTransactionHash as Hash
        const receipt = yield* Effect.tryPromise(() => read.getTransactionReceipt({ hash })).pipe(Effect.option)
        if (receipt._tag === "Some") {
          if (receipt.value.status === "success") {
            yield* markSwept(inFlight, now)
            return "swept" as const
          }
          yield* markFailed(inFlight, `sweep transaction ${hash} reverted`, now)
          return "failed" as const
        }
        // Not mined yet: wait for it. A transaction the node no longer knows was dropped: sweep again.
        const known = yield* Effect.tryPromise(() => read.getTransaction({ hash })).pipe(Effect.option)
        if (known._tag === "None") yield* markFailed(inFlight, `sweep transaction ${hash} was dropped`, now)
        return "waiting" as const
      }
      const balance = yield* Effect.tryPromise(() => read.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [forwarder] }))
      if (balance === 0n) {
        // Someone already flushed it (flush is open to anyone): the funds are at the recipient.
        yield* markSwept(payments, now)
        return "swept" as const
      }
      const sent = yield* Effect.tryPromise(() =>
        write.writeContract({
          address: rails.forwarder.factories[network]!,
          abi: ForwarderFactory.abi,
          functionName: "deployAndFlush",
          args: [forwarderSalt(first.optionId), getAddress(first.recipient), token]
        })
      ).pipe(Effect.result)
      if (sent._tag === "Failure") {
        yield* markFailed(payments, messageOf(sent.failure.cause ?? sent.failure), now)
        yield* Effect.logWarning("Forwarder sweep failed; will retry").pipe(
          Effect.annotateLogs({ network, forwarder, error: messageOf(sent.failure.cause ?? sent.failure) })
        )
        return "failed" as const
      }
      yield* markSent(payments, sent.success)
      return "sent" as const
    }).pipe(
      Effect.catch((error) => markFailed(payments, messageOf((error as { cause?: unknown }).cause ?? error), now).pipe(Effect.as("failed" as const)))
    )

  const runOnce = Effect.fn("ForwarderSweeper.runOnce")(function*(network: EvmNetwork) {
    const report = { network, sent: 0, swept: 0, failed: 0 }
    if (!clients.has(network)) return report
    const now = new Date(yield* Clock.currentTimeMillis)
    const due = yield* repo.due(network, now)
    const byForwarder = new Map<string, Array<DuePayment>>()
    for (const payment of due) byForwarder.set(payment.optionId, [...(byForwarder.get(payment.optionId) ?? []), payment])
    for (const payments of byForwarder.values()) {
      const outcome = yield* sweepForwarder(network, payments, now)
      if (outcome !== "waiting") report[outcome]++
    }
    return report
  })

  return { networks, runOnce }
})
