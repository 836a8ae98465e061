import { Context, Effect, Layer } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import type { WatchedNetwork } from "../config/ChainConfig.ts"

/** `eth_getCode` at the latest block on one endpoint: the code's hex, or undefined when it did not answer. */
const codeAt = (endpoint: string, address: string, timeoutMs: number) =>
  Effect.tryPromise(async (signal) => {
    const response = await fetch(endpoint, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getCode", params: [address, "latest"] }),
      signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])
    })
    const body = await response.json() as { readonly result?: unknown }
    return typeof body.result === "string" && /^0x[0-9a-fA-F]*$/.test(body.result) ? body.result : undefined
  }).pipe(Effect.orElseSucceed(() => undefined))

/** Whether an EVM address has contract code, read through the network's configured endpoints. */
export class ContractCode extends Context.Service<ContractCode, {
  /** True or false as an endpoint answered; undefined when the network has no endpoint or none answered. */
  readonly hasCode: (network: string, address: string) => Effect.Effect<boolean | undefined>
}>()("Refunds/ContractCode") {
  /** No endpoints: nothing is checked (each refund records it). */
  static readonly unchecked = Layer.succeed(ContractCode, { hasCode: () => Effect.succeed(undefined) })

  /** Over the configured EVM endpoints, preferred first, the next one while one does not answer. */
  static readonly layer = Layer.effect(
    ContractCode,
    Effect.gen(function*() {
      const { chains } = yield* AppConfig
      return {
        hasCode: Effect.fn("ContractCode.hasCode")(function*(network: string, address: string) {
          for (const endpoint of chains.endpointLists[network as WatchedNetwork] ?? []) {
            const code = yield* codeAt(endpoint, address, chains.rpcTimeoutMs)
            if (code !== undefined) return code !== "0x"
          }
          return undefined
        })
      }
    })
  )
}
