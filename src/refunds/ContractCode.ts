import { Context, Effect, Layer } from "effect"

/** Whether an EVM address has contract code, read through the network's configured endpoints. */
export class ContractCode extends Context.Service<ContractCode, {
  /** True or false as an endpoint answered; undefined when the network has no endpoint or none answered. */
  readonly hasCode: (network: string, address: string) => Effect.Effect<boolean | undefined>
}>()("Refunds/ContractCode") {
  /** No endpoints: nothing is checked (each refund records it). */
  static readonly unchecked = Layer.succeed(ContractCode, { hasCode: () => Effect.succeed(undefined) })
}
