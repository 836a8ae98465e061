import fc from "fast-check"
import QRCode from "qrcode"
import { describe, expect, it } from "vitest"
import { qrSvg, qrSymbol } from "../../src/payments/QrCode.ts"
import { decodeQrSvg } from "../support/QrRaster.ts"

// The reference: the `qrcode` package with the same choices (one byte segment, level M, mask 4).
const options = { errorCorrectionLevel: "M", maskPattern: 4 } as const
const reference = (text: string) => QRCode.create([{ data: new TextEncoder().encode(text), mode: "byte" }], options)
const referenceSvg = (text: string) => QRCode.toString([{ data: new TextEncoder().encode(text), mode: "byte" }], { ...options, type: "svg", margin: 2 })

describe("QR codes", () => {
  it("are the reference symbols, module for module, and the same SVG, for every length that changes the version", async () => {
    // the capacities of versions 1..40 at level M in byte mode, and one byte past each
    const lengths = [1, 14, 15, 26, 27, 42, 43, 62, 63, 84, 85, 106, 107, 122, 123, 152, 153, 180, 181, 213, 214, 251, 252, 287, 288, 331, 332, 362, 363, 412, 413, 450, 451, 504,
      505, 560, 561, 624, 625, 666, 667, 711, 712, 779, 780, 857, 858, 911, 912, 997, 998, 1059, 1060, 1125, 1126, 1190, 1191, 1264, 1265, 1370, 1371, 1452, 1453, 1538, 1539, 1628,
      1629, 1722, 1723, 1809, 1810, 1911, 1912, 1989, 1990, 2099, 2100, 2213, 2214, 2331]
    for (const length of lengths) {
      const text = Array.from({ length }, (_, index) => String.fromCharCode(33 + ((index * 7 + length) % 90))).join("")
      const ours = qrSymbol(text)
      const theirs = reference(text)
      expect(ours.size, `length ${length}`).toBe(theirs.modules.size)
      expect(Buffer.from(ours.modules).equals(Buffer.from(theirs.modules.data)), `length ${length}`).toBe(true)
      if (length < 700) expect(qrSvg(text)).toBe(await referenceSvg(text))
    }
  })

  it("match the reference for any payment-URI-like text, UTF-8 included", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "grapheme", maxLength: 300 }), async (text) => {
        expect(qrSvg(text)).toBe(await referenceSvg(text))
      }),
      { numRuns: 150 }
    )
  })

  it("decode back to the text with a QR reader", () => {
    for (const text of ["bitcoin:bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq?amount=0.00039231",
      "solana:7dHbWXmci3dT8UFYWYZweBLXgycu7Y3iL6trKn1Y7ARj?amount=25.5&spl-token=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v&label=Caf%C3%A9"])
    {
      expect(decodeQrSvg(qrSvg(text))).toBe(text)
    }
  })

  it("refuses text beyond the capacity of version 40", () => {
    expect(() => qrSymbol("x".repeat(2332))).toThrow(RangeError)
  })
})
