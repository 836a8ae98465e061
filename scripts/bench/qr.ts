/**
 * The QR encoder side by side with the `qrcode` package, in one run (prints one JSON line): SVGs
 * of the payment URIs an invoice carries (BIP21, EIP-681 for two tokens, Solana Pay), both with
 * the same choices (byte mode, level M, mask pattern 4, margin 2), alternated in rounds.
 *
 *   qr.ts [--quick]
 */
import QRCode from "qrcode"
import { qrSvg } from "../../src/payments/QrCode.ts"

const ROUNDS = process.argv.includes("--quick") ? 3 : 7
const PER_ROUND = 2_000
const uris = [
  "bitcoin:bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu?amount=0.00153847&label=Bench%20Store&message=Invoice%205f0c6a2e",
  "ethereum:0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48@1/transfer?address=0x8ba1f109551bD432803012645Ac136ddd64DBA72&uint256=25500000",
  "ethereum:0xdAC17F958D2ee523a2206206994597C13D831ec7@42161/transfer?address=0x8ba1f109551bD432803012645Ac136ddd64DBA72&uint256=25500000",
  "solana:7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU?amount=25.5&spl-token=EPjFWdd5AufqSSqeM2qN1xyybapC8G4wEGGkZwyTDt1v&reference=9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin&memo=svc%3A5f0c6a2e"
]
const options = { errorCorrectionLevel: "M" as const, maskPattern: 4 as const, type: "svg" as const, margin: 2 }
const reference = (text: string) => QRCode.toString([{ data: new TextEncoder().encode(text), mode: "byte" }], options)

const timeOne = async (encode: (text: string) => unknown) => {
  const started = performance.now()
  for (let i = 0; i < PER_ROUND; i++) await encode(uris[i % uris.length])
  return ((performance.now() - started) * 1000) / PER_ROUND
}

const ours: Array<number> = []
const theirs: Array<number> = []
await timeOne(qrSvg)
await timeOne(reference)
for (let round = 0; round < ROUNDS; round++) {
  ours.push(await timeOne(qrSvg))
  theirs.push(await timeOne(reference))
}
const median = (values: Array<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const round = (value: number) => Number(value.toFixed(1))
console.log(JSON.stringify({
  codes: PER_ROUND,
  rounds: ROUNDS,
  oursMicrosPerCode: round(median(ours)),
  qrcodeMicrosPerCode: round(median(theirs)),
  ratio: Number((median(theirs) / median(ours)).toFixed(2)),
  perInvoiceMicros: { ours: round(median(ours) * uris.length), qrcode: round(median(theirs) * uris.length) }
}))
