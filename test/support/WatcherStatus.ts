import type { ChainWatcherStatus } from "../../src/ops/ChainWatcherStatus.ts"
import type { TestMerchant } from "./TestApp.ts"

/** The dashboard's status of `network`'s watcher (GET /api/dashboard/chain-watchers); throws when it is not listed. */
export const watcherStatus = async (merchant: TestMerchant, network: ChainWatcherStatus["network"]): Promise<ChainWatcherStatus> => {
  const { body } = await merchant.dashboard("/api/dashboard/chain-watchers")
  const found = (body.watchers as ReadonlyArray<ChainWatcherStatus>).find((entry) => entry.network === network)
  if (found === undefined) throw new Error(`no watcher status for ${network}`)
  return found
}

/** What the endpoint suites read of an invoice answer's payment options. */
export interface OptionAnswer {
  readonly id: string
  readonly network: string
  readonly destinationAddress: string
}

/** The payment options of an invoice answer's body. */
export const optionsOf = (body: { readonly paymentOptions: unknown }) => body.paymentOptions as ReadonlyArray<OptionAnswer>

/** The watcher's report of the endpoint at `url`; throws when it is not listed. */
export const endpointReport = (status: ChainWatcherStatus, url: string) => {
  const found = status.endpoints.find((entry) => entry.endpoint === url)
  if (found === undefined) throw new Error(`no endpoint ${url} in the ${status.network} watcher's report`)
  return found
}
