import type JsQr from "jsqr"
import { createRequire } from "node:module"

// jsqr is CommonJS with `export default` typings: load it as CommonJS.
const jsQR = createRequire(import.meta.url)("jsqr") as typeof JsQr.default

/**
 * Renders the dark path of a `qrcode` SVG (runs of `M x y h w` / `m dx dy h w`) into RGBA pixels
 * and decodes them with jsQR: an independent reading of the QR code the API serves.
 */
export const decodeQrSvg = (svg: string, scale = 4): string | undefined => {
  const size = Number(/viewBox="0 0 (\d+) \d+"/.exec(svg)?.[1])
  const path = /<path stroke="#000000" d="([^"]+)"/.exec(svg)?.[1]
  if (!Number.isFinite(size) || path === undefined) return undefined
  const dark = Array.from({ length: size }, () => new Array<boolean>(size).fill(false))
  let x = 0
  let y = 0
  for (const [, command, a, b] of path.matchAll(/([MmHh])\s*(-?[\d.]+)(?:\s+(-?[\d.]+))?/g)) {
    if (command === "M") [x, y] = [Number(a), Number(b)]
    else if (command === "m") [x, y] = [x + Number(a), y + Number(b)]
    else {
      const width = Number(a)
      for (let column = x; column < x + width; column++) dark[Math.floor(y)][column] = true
      x += width
    }
  }
  const pixels = new Uint8ClampedArray(size * scale * size * scale * 4)
  for (let row = 0; row < size * scale; row++) {
    for (let column = 0; column < size * scale; column++) {
      const value = dark[Math.floor(row / scale)][Math.floor(column / scale)] ? 0 : 255
      const offset = (row * size * scale + column) * 4
      pixels.set([value, value, value, 255], offset)
    }
  }
  return jsQR(pixels, size * scale, size * scale)?.data
}
