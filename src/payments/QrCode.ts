/**
 * QR codes for payment URIs (ISO/IEC 18004): one byte-mode segment, error correction level M,
 * the smallest version that fits, and a fixed mask pattern (4; every mask yields a valid code,
 * and the eight-mask search would triple the cost). Written for the create path: typed arrays,
 * precomputed tables, no per-module objects. The symbol and its SVG are the same as the `qrcode`
 * package's for the same options (test/unit/qr-code.test.ts compares them), at a fraction of its
 * CPU time.
 */

// Per version 1..40 at level M: error correction blocks, error correction codewords in total, and
// all codewords of the symbol.
const EC_BLOCKS_M = [
  1,
  1,
  1,
  2,
  2,
  4,
  4,
  4,
  5,
  5,
  5,
  8,
  9,
  9,
  10,
  10,
  11,
  13,
  14,
  16,
  17,
  17,
  18,
  20,
  21,
  23,
  25,
  26,
  28,
  29,
  31,
  33,
  35,
  37,
  38,
  40,
  43,
  45,
  47,
  49
]
const EC_CODEWORDS_M = [
  10,
  16,
  26,
  36,
  48,
  64,
  72,
  88,
  110,
  130,
  150,
  176,
  198,
  216,
  240,
  280,
  308,
  338,
  364,
  416,
  442,
  476,
  504,
  560,
  588,
  644,
  700,
  728,
  784,
  812,
  868,
  924,
  980,
  1036,
  1064,
  1120,
  1204,
  1260,
  1316,
  1372
]
const TOTAL_CODEWORDS = [
  26,
  44,
  70,
  100,
  134,
  172,
  196,
  242,
  292,
  346,
  404,
  466,
  532,
  581,
  655,
  733,
  815,
  901,
  991,
  1085,
  1156,
  1258,
  1364,
  1474,
  1588,
  1706,
  1828,
  1921,
  2051,
  2185,
  2323,
  2465,
  2611,
  2761,
  2876,
  3034,
  3196,
  3362,
  3532,
  3706
]
const MASK_PATTERN = 4
const ERROR_CORRECTION_M = 0b00

// GF(256) with the QR polynomial x^8 + x^4 + x^3 + x^2 + 1.
const EXP = new Uint8Array(512)
const LOG = new Uint8Array(256)
{
  let x = 1
  for (let i = 0; i < 255; i++) {
    EXP[i] = x
    LOG[x] = i
    x <<= 1
    if (x & 0x100) x ^= 0x11d
  }
  for (let i = 255; i < 512; i++) EXP[i] = EXP[i - 255]
}

/** Generator polynomial of the given degree, highest coefficient first (always 1), as logs. */
const generators = new Map<number, Uint8Array>()
const generatorLogs = (degree: number): Uint8Array => {
  let cached = generators.get(degree)
  if (cached !== undefined) return cached
  let poly = new Uint8Array([1])
  for (let i = 0; i < degree; i++) {
    const next = new Uint8Array(poly.length + 1)
    for (let j = 0; j < poly.length; j++) {
      next[j] ^= poly[j]
      if (poly[j] !== 0) next[j + 1] ^= EXP[LOG[poly[j]] + i]
    }
    poly = next
  }
  cached = new Uint8Array(degree)
  for (let j = 0; j < degree; j++) cached[j] = LOG[poly[j + 1]]
  generators.set(degree, cached)
  return cached
}

const reedSolomon = (data: Uint8Array, degree: number): Uint8Array => {
  const gen = generatorLogs(degree)
  // remainder[0..degree) shifted by one per data byte: kept in a window of a longer buffer
  const work = new Uint8Array(data.length + degree)
  for (let i = 0; i < data.length; i++) {
    const factor = data[i] ^ work[i]
    if (factor !== 0) {
      const logFactor = LOG[factor]
      for (let j = 0; j < degree; j++) work[i + 1 + j] ^= EXP[gen[j] + logFactor]
    }
  }
  return work.subarray(data.length, data.length + degree)
}

const DIV3 = Uint8Array.from({ length: 177 }, (_, index) => Math.floor(index / 3))

const bchDigits = (value: number) => (value === 0 ? 0 : 32 - Math.clz32(value))

const bchRemainder = (value: number, generator: number) => {
  let d = value
  const g = bchDigits(generator)
  while (bchDigits(d) - g >= 0) d ^= generator << (bchDigits(d) - g)
  return d
}

const FORMAT_BITS = (() => {
  const data = (ERROR_CORRECTION_M << 3) | MASK_PATTERN
  return ((data << 10) | bchRemainder(data << 10, 0x537)) ^ 0x5412
})()

const versionBits = (version: number) => (version << 12) | bchRemainder(version << 12, 0x1f25)

const alignmentCoordinates = (version: number): Array<number> => {
  if (version === 1) return []
  const count = Math.floor(version / 7) + 2
  const size = version * 4 + 17
  const interval = size === 145 ? 26 : Math.ceil((size - 13) / (2 * count - 2)) * 2
  const positions = [size - 7]
  for (let i = 1; i < count - 1; i++) positions[i] = positions[i - 1] - interval
  positions.push(6)
  return positions.reverse()
}

/** The smallest level-M version whose data capacity holds `length` bytes in byte mode. */
const versionFor = (length: number): number => {
  for (let version = 1; version <= 40; version++) {
    const dataBits = (TOTAL_CODEWORDS[version - 1] - EC_CODEWORDS_M[version - 1]) * 8
    const countBits = version < 10 ? 8 : 16
    if (4 + countBits + length * 8 <= dataBits) return version
  }
  throw new RangeError(`QR code: ${length} bytes do not fit in version 40 at level M`)
}

/** Data and error correction codewords, interleaved as placed in the symbol. */
const codewords = (bytes: Uint8Array, version: number): Uint8Array => {
  const total = TOTAL_CODEWORDS[version - 1]
  const ecTotal = EC_CODEWORDS_M[version - 1]
  const dataTotal = total - ecTotal
  const data = new Uint8Array(dataTotal)
  // mode 0100, character count, the bytes, a terminator of up to 4 zero bits, then 0xEC/0x11 padding
  let bit = 0
  const put = (value: number, length: number) => {
    for (let i = length - 1; i >= 0; i--, bit++) if ((value >>> i) & 1) data[bit >>> 3] |= 0x80 >>> (bit & 7)
  }
  put(0b0100, 4)
  put(bytes.length, version < 10 ? 8 : 16)
  for (let i = 0; i < bytes.length; i++) put(bytes[i], 8)
  bit = Math.min(bit + 4, dataTotal * 8)
  let index = Math.ceil(bit / 8)
  for (let pad = 0; index < dataTotal; index++, pad++) data[index] = pad % 2 === 0 ? 0xec : 0x11

  const blocks = EC_BLOCKS_M[version - 1]
  const ecPerBlock = ecTotal / blocks
  const shortBlocks = blocks - (total % blocks)
  const shortData = Math.floor(dataTotal / blocks)
  const dataBlocks: Array<Uint8Array> = []
  const ecBlocks: Array<Uint8Array> = []
  let offset = 0
  for (let block = 0; block < blocks; block++) {
    const length = block < shortBlocks ? shortData : shortData + 1
    const slice = data.subarray(offset, offset + length)
    dataBlocks.push(slice)
    ecBlocks.push(reedSolomon(slice, ecPerBlock))
    offset += length
  }
  const result = new Uint8Array(total)
  let out = 0
  for (let i = 0; i <= shortData; i++) {
    for (let block = 0; block < blocks; block++) if (i < dataBlocks[block].length) result[out++] = dataBlocks[block][i]
  }
  for (let i = 0; i < ecPerBlock; i++) for (let block = 0; block < blocks; block++) result[out++] = ecBlocks[block][i]
  return result
}

export interface QrSymbol {
  readonly size: number
  /** Row-major, 1 for a dark module. */
  readonly modules: Uint8Array
}

const utf8 = new TextEncoder()

/** The QR symbol of `text` (UTF-8 bytes). */
export const qrSymbol = (text: string): QrSymbol => {
  const bytes = utf8.encode(text)
  const version = versionFor(bytes.length)
  const size = version * 4 + 17
  const modules = new Uint8Array(size * size)
  const reserved = new Uint8Array(size * size)
  const set = (row: number, col: number, dark: boolean | number) => {
    modules[row * size + col] = dark ? 1 : 0
    reserved[row * size + col] = 1
  }

  for (const [row, col] of [[0, 0], [size - 7, 0], [0, size - 7]]) {
    for (let r = -1; r <= 7; r++) {
      if (row + r < 0 || row + r >= size) continue
      for (let c = -1; c <= 7; c++) {
        if (col + c < 0 || col + c >= size) continue
        set(row + r, col + c, (r >= 0 && r <= 6 && (c === 0 || c === 6)) || (c >= 0 && c <= 6 && (r === 0 || r === 6)) || (r >= 2 && r <= 4 && c >= 2 && c <= 4))
      }
    }
  }
  for (let i = 8; i < size - 8; i++) {
    set(i, 6, i % 2 === 0)
    set(6, i, i % 2 === 0)
  }
  const coordinates = alignmentCoordinates(version)
  const last = coordinates.length - 1
  for (let a = 0; a <= last; a++) {
    for (let b = 0; b <= last; b++) {
      if ((a === 0 && b === 0) || (a === 0 && b === last) || (a === last && b === 0)) continue
      const row = coordinates[a]
      const col = coordinates[b]
      for (let r = -2; r <= 2; r++) {
        for (let c = -2; c <= 2; c++) set(row + r, col + c, r === -2 || r === 2 || c === -2 || c === 2 || (r === 0 && c === 0))
      }
    }
  }
  for (let i = 0; i < 15; i++) {
    const dark = (FORMAT_BITS >> i) & 1
    set(i < 6 ? i : i < 8 ? i + 1 : size - 15 + i, 8, dark)
    set(8, i < 8 ? size - i - 1 : i < 9 ? 15 - i : 14 - i, dark)
  }
  set(size - 8, 8, 1)
  if (version >= 7) {
    const bits = versionBits(version)
    for (let i = 0; i < 18; i++) {
      const dark = (bits >> i) & 1
      set(Math.floor(i / 3), (i % 3) + size - 11, dark)
      set((i % 3) + size - 11, Math.floor(i / 3), dark)
    }
  }

  // Data in two-module columns, zigzagging up and down from the bottom right, masked as placed.
  const data = codewords(bytes, version)
  let byteIndex = 0
  let bitIndex = 7
  let row = size - 1
  let step = -1
  for (let col = size - 1; col > 0; col -= 2) {
    if (col === 6) col--
    for (;;) {
      for (let c = 0; c < 2; c++) {
        const index = row * size + col - c
        if (reserved[index] === 1) continue
        let dark = byteIndex < data.length ? (data[byteIndex] >>> bitIndex) & 1 : 0
        if ((((row >> 1) + DIV3[col - c]) & 1) === 0) dark ^= 1
        modules[index] = dark
        if (--bitIndex === -1) {
          byteIndex++
          bitIndex = 7
        }
      }
      row += step
      if (row < 0 || row >= size) {
        row -= step
        step = -step
        break
      }
    }
  }
  return { size, modules }
}

// The path is written as ASCII bytes into one reused buffer: building it from thousands of small
// strings cost as much as encoding the symbol.
let scratch = Buffer.allocUnsafe(64 * 1024)
const DIGITS = Array.from({ length: 256 }, (_, value) => Buffer.from(String(value), "latin1"))

/** SVG of a symbol: a white square and one path of horizontal runs, with a quiet zone of `margin`. */
export const qrSymbolSvg = ({ modules, size }: QrSymbol, margin = 2): string => {
  if (!Number.isInteger(margin) || margin < 0 || size + margin * 2 > 255) throw new RangeError(`QR code: margin ${margin} is not supported`)
  const outer = size + margin * 2
  // at most one run per two modules, each at most "m255 0h255" or "M255 255.5h255"
  const bound = (size * size / 2 + size) * 15
  if (scratch.length < bound) scratch = Buffer.allocUnsafe(Math.ceil(bound))
  const out = scratch
  let at = 0
  const number = (value: number) => {
    const digits = DIGITS[value]
    for (let i = 0; i < digits.length; i++) out[at++] = digits[i]
  }
  for (let row = 0; row < size; row++) {
    const base = row * size
    let col = 0
    let gap = 0
    let first = true
    while (col < size) {
      if (modules[base + col] === 0) {
        col++
        gap++
        continue
      }
      let run = 1
      while (col + run < size && modules[base + col + run] === 1) run++
      if (first) {
        out[at++] = 0x4d // M
        number(col + margin)
        out[at++] = 0x20
        number(row + margin)
        out[at++] = 0x2e // .5
        out[at++] = 0x35
      } else {
        out[at++] = 0x6d // m
        number(gap)
        out[at++] = 0x20
        out[at++] = 0x30
      }
      out[at++] = 0x68 // h
      number(run)
      first = false
      col += run
      gap = 0
    }
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${outer} ${outer}" shape-rendering="crispEdges">` +
    `<path fill="#ffffff" d="M0 0h${outer}v${outer}H0z"/><path stroke="#000000" d="${out.toString("latin1", 0, at)}"/></svg>\n`
}

/** SVG QR code of a payment URI. */
export const qrSvg = (text: string): string => qrSymbolSvg(qrSymbol(text))
