import { bitcoinAddress, evmDepositAddress } from "./Derivation.ts"
import { qrSvg } from "./QrCode.ts"

/**
 * The CPU-heavy steps of creating payment options, as plain data in and out so that they can run
 * on a worker thread (PaymentWorker) or, when none is available, inline with the same result.
 */
export type PaymentTask =
  | { readonly kind: "evmAddresses"; readonly keys: ReadonlyArray<{ readonly xpub: string; readonly index: number }> }
  | { readonly kind: "bitcoinAddresses"; readonly xpub: string; readonly first: number; readonly count: number }
  | { readonly kind: "qrSvgs"; readonly texts: ReadonlyArray<string | null> }

/** Every task answers with one entry per requested item, in request order. */
export type PaymentTaskResult = ReadonlyArray<string | null>

export const runPaymentTask = (task: PaymentTask): PaymentTaskResult => {
  switch (task.kind) {
    case "evmAddresses":
      return task.keys.map(({ index, xpub }) => evmDepositAddress(xpub, index))
    case "bitcoinAddresses":
      return Array.from({ length: task.count }, (_, offset) => bitcoinAddress(task.xpub, task.first + offset))
    case "qrSvgs":
      return task.texts.map((text) => (text === null ? null : qrSvg(text)))
  }
}
