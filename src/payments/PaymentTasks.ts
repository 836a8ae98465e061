import { bitcoinAddress, evmDepositAddress } from "./Derivation.ts"
import { isEvm } from "./Networks.ts"
import { buildOption, type OptionRequest } from "./OptionBuilder.ts"
import type { RailSettingsShape } from "./PaymentMethod.ts"

/**
 * The CPU-heavy steps of creating payment options, as plain data in and out so that they can run
 * on a worker thread (PaymentWorker) or, when none is available, inline with the same result.
 */
export type PaymentTask =
  | { readonly kind: "bitcoinAddresses"; readonly xpub: string; readonly first: number; readonly count: number }
  | { readonly kind: "options"; readonly rails: RailSettingsShape; readonly requests: ReadonlyArray<OptionRequest> }

export type BuiltOption = ReturnType<typeof buildOption>

/** One option of an `options` task: built, or why it could not be (for that method's error). */
export type OptionOutcome = { readonly ok: true; readonly option: BuiltOption } | { readonly ok: false; readonly message: string }

/** Every task answers with one entry per requested item, in request order. */
export type PaymentTaskResult = ReadonlyArray<string> | ReadonlyArray<OptionOutcome>

/**
 * Builds an invoice's options, deriving each EVM deposit address once even when options on
 * several networks share it (same extended key and index), and drawing their QR codes.
 */
const buildOptions = (rails: RailSettingsShape, requests: ReadonlyArray<OptionRequest>): ReadonlyArray<OptionOutcome> => {
  const derived = new Map<string, string>()
  return requests.map((request): OptionOutcome => {
    try {
      const { method } = request
      let knownAddress = request.knownAddress
      if (knownAddress === undefined && isEvm(method.network) && method.railType === "address_transfer" &&
        method.xpub !== null && request.derivationIndex !== undefined)
      {
        const key = `${method.xpub}/${request.derivationIndex}`
        knownAddress = derived.get(key) ?? evmDepositAddress(method.xpub, request.derivationIndex)
        derived.set(key, knownAddress)
      }
      return { ok: true, option: buildOption({ ...request, knownAddress }, rails) }
    } catch (error) {
      return { ok: false, message: error instanceof Error ? error.message : String(error) }
    }
  })
}

export const runPaymentTask = (task: PaymentTask): PaymentTaskResult => {
  switch (task.kind) {
    case "bitcoinAddresses":
      return Array.from({ length: task.count }, (_, offset) => bitcoinAddress(task.xpub, task.first + offset))
    case "options":
      return buildOptions(task.rails, task.requests)
  }
}
