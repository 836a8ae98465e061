import { describe, expect, it } from "vitest"
import { INVALID_UTF8_MESSAGE, jsonBodyBytesProblem, MAX_PATH_SEGMENT, pathProblem, urlProblem } from "../../src/http/RequestLimits.ts"

const bytes = (...values: Array<number>) => new Uint8Array(values)
const utf8 = (text: string) => new TextEncoder().encode(text)

describe("jsonBodyBytesProblem", () => {
  it("refuses bytes that are not UTF-8", () => {
    const invalid = [
      bytes(0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d), // {"a":"\xff"}
      bytes(0xc3), // truncated two-byte sequence
      bytes(0xe0, 0xa4), // truncated three-byte sequence
      bytes(0xc0, 0xaf), // overlong "/"
      bytes(0xed, 0xa0, 0x80), // an encoded surrogate (CESU-8)
      bytes(0xf4, 0x90, 0x80, 0x80), // above U+10FFFF
      bytes(0x80) // a lone continuation byte
    ]
    for (const body of invalid) expect(jsonBodyBytesProblem(body), String(body)).toBe(INVALID_UTF8_MESSAGE)
  })

  it("takes UTF-8 and keeps the text checks", () => {
    expect(jsonBodyBytesProblem(utf8(`{"productName":"T \u{1F600} é ü 中"}`))).toBeUndefined()
    expect(jsonBodyBytesProblem(utf8(`\uFEFF{"a":1}`))).toBeUndefined()
    expect(jsonBodyBytesProblem(new Uint8Array(0))).toBeUndefined()
    expect(jsonBodyBytesProblem(utf8(`{"a":"x\u0000"}`))).toBe("Request body must not contain a NUL character (\\u0000)")
    expect(jsonBodyBytesProblem(utf8(`${"[".repeat(40)}${"]".repeat(40)}`))).toBe("Request body is nested too deeply (at most 32 levels)")
  })
})

describe("pathProblem", () => {
  it("refuses a path whose percent-encoding is not UTF-8", () => {
    for (const url of ["/api/checkout/invoices/%E0%A4%A", "/api/checkout/invoices/%ZZ", "/api/x/100%", "/api/x/%C0%AF", "/api/x/%ED%A0%80", "/a/%E0%A4%A?q=1"]) {
      expect(pathProblem(url), url).toBe("Request path must be valid percent-encoded UTF-8")
    }
  })

  it("refuses a segment longer than the limit, counted decoded", () => {
    const long = "a".repeat(MAX_PATH_SEGMENT + 1)
    expect(pathProblem(`/api/checkout/invoices/${long}`)).toBe(`Request path segments (ids) must be at most ${MAX_PATH_SEGMENT} characters`)
    expect(pathProblem(`/api/checkout/invoices/${long}/status?x=1`)).toMatch(/at most 100 characters/)
    expect(pathProblem(`/api/checkout/invoices/${"%41".repeat(MAX_PATH_SEGMENT)}`)).toBeUndefined()
    expect(pathProblem(`/api/checkout/invoices/${"a".repeat(MAX_PATH_SEGMENT)}`)).toBeUndefined()
  })

  it("takes well-formed paths, and does not look at the query", () => {
    for (const url of ["/", "/api/checkout/invoices", `/api/checkout/invoices/${crypto.randomUUID()}/status`, "/api/x/%E2%82%AC%20a", `/api/x?q=${"b".repeat(500)}`,
      "/api/x?q=%E0%A4%A"])
    {
      expect(pathProblem(url), url).toBeUndefined()
    }
  })

  it("is part of urlProblem, after the NUL checks", () => {
    expect(urlProblem("/api/checkout/invoices/%E0%A4%A")).toBe("Request path must be valid percent-encoded UTF-8")
    expect(urlProblem("/api/x/a%00b")).toBe("Request path must not contain a NUL character (\\u0000)")
    expect(urlProblem("/api/x/%ZZ?q=%00")).toBe("Query field q must not contain a NUL character (\\u0000)")
    expect(urlProblem("/api/x/%ZZ?a=1&b=%00")).toBe("Query field b must not contain a NUL character (\\u0000)")
    expect(urlProblem("/api/x/%ZZ?q=1")).toBe("Request path must be valid percent-encoded UTF-8")
  })
})
