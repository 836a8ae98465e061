import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  backoffMillis,
  type EndpointState,
  healthOf,
  initialStates,
  readOrder,
  reportOf,
  retryAfterMillis,
  tally,
  voters,
  withFailure,
  withHead,
  withSuccess,
  withTally
} from "../../src/chains/source/EndpointSelection.ts"
import { endpointsOf } from "../../src/ops/ChainWatcherStatus.ts"

const URLS = ["https://a.example/v2/SECRET", "https://b.example/?key=SECRET", "https://c.example"]
const NOW = 1_000_000
const heads = (values: ReadonlyArray<bigint>) =>
  values.reduce<ReadonlyArray<EndpointState>>((states, head, index) => withHead(states, index, head), initialStates(URLS.slice(0, values.length)))

describe("endpoint selection", () => {
  it("reads from the first listed while it is usable, fails over in order, and returns when it recovers", () => {
    let states = heads([100n, 100n, 100n])
    expect(readOrder(states, NOW, 3n)).toEqual([0, 1, 2])
    states = withFailure(states, 0, { message: "timed out" }, NOW)
    expect(readOrder(states, NOW, 3n)).toEqual([1, 2])
    expect(healthOf(states, 0, 3n)).toBe("failing")
    // Its back-off over, its next head answer makes it the preferred one again.
    states = withHead(states, 0, 101n)
    expect(readOrder(states, NOW + backoffMillis(1), 3n)).toEqual([0, 1, 2])
  })

  it("keeps a rate-limited endpoint alone for its Retry-After, then for a doubling back-off", () => {
    let states = heads([100n, 100n, 100n])
    states = withFailure(states, 0, { message: "HTTP 429", rateLimited: true, retryAfterMs: 30_000 }, NOW)
    expect(healthOf(states, 0, 3n)).toBe("rate_limited")
    expect(voters(states, 100n, NOW + 29_999, 3n)).toEqual([1, 2])
    expect(voters(states, 100n, NOW + 30_000, 3n)).toEqual([1, 2]) // still failing until it answers
    expect(reportOf(states, 1, undefined, 3n).endpoints[0]).toMatchObject({ state: "rate_limited", retryAt: new Date(NOW + 30_000).toISOString(), inUse: false })
    expect([1, 2, 3, 7, 10].map(backoffMillis)).toEqual([1_000, 2_000, 4_000, 60_000, 60_000])
    expect(withSuccess(states, 0)[0].failures).toBe(0)
  })

  it("does not use an endpoint more than the allowed lag behind the highest head", () => {
    const states = heads([96n, 100n, 99n])
    expect(readOrder(states, NOW, 3n)).toEqual([1, 2])
    expect(healthOf(states, 0, 3n)).toBe("lagging")
    expect(readOrder(heads([97n, 100n, 99n]), NOW, 3n)).toEqual([0, 1, 2])
  })

  it("with a single endpoint always reads from it, whatever its state", () => {
    const states = withFailure(initialStates(["http://only"]), 0, { message: "HTTP 429", rateLimited: true, retryAfterMs: 60_000 }, NOW)
    expect(readOrder(states, NOW, 0n)).toEqual([0])
  })

  it("outvotes a lying minority and halts on a split", () => {
    const outvoted = tally([{ index: 0, hash: "0xbad" }, { index: 1, hash: "0xgood" }, { index: 2, hash: "0xgood" }])
    expect(outvoted).toEqual({ agreed: "0xgood", agreeing: [1, 2], dissenters: [0] })
    const states = withTally(heads([100n, 100n, 100n]), 100n, outvoted)
    expect(readOrder(states, NOW, 3n)).toEqual([1, 2])
    expect(healthOf(states, 0, 3n)).toBe("disagreeing")
    const split = tally([{ index: 0, hash: "0xa" }, { index: 1, hash: "0xb" }])
    expect(split.agreed).toBeUndefined()
    // When all disagree, reads still go to the preferred one (the scan stops below the height).
    expect(readOrder(withTally(heads([100n, 100n]), 100n, split), NOW, 3n)).toEqual([0, 1])
    // One that has no block there does not vote.
    expect(tally([{ index: 0, hash: undefined }, { index: 1, hash: "0xa" }]).agreed).toBe("0xa")
  })

  it("agrees exactly when more than half of the answers are one hash (property)", () => {
    fc.assert(fc.property(fc.array(fc.option(fc.constantFrom("0xa", "0xb", "0xc"), { nil: undefined }), { maxLength: 9 }), (hashes) => {
      const result = tally(hashes.map((hash, index) => ({ index, hash })))
      const answered = hashes.filter((hash) => hash !== undefined)
      const best = ["0xa", "0xb", "0xc"].find((hash) => 2 * answered.filter((answer) => answer === hash).length > answered.length)
      expect(result.agreed).toBe(best)
      expect(result.agreeing.length + result.dissenters.length).toBe(answered.length)
    }))
  })

  it("never reads from a lagging, backing-off or outvoted endpoint while another is usable (property)", () => {
    const endpoint = fc.record({ head: fc.bigInt(90n, 110n), failed: fc.boolean(), outvoted: fc.boolean() })
    fc.assert(fc.property(fc.array(endpoint, { minLength: 2, maxLength: 5 }), fc.bigInt(0n, 10n), (endpoints, lag) => {
      let states = initialStates(endpoints.map((_, index) => `http://e${index}`))
      endpoints.forEach((value, index) => {
        states = withHead(states, index, value.head)
        if (value.outvoted) states = withTally(states, 100n, { agreed: "0xa", agreeing: [], dissenters: [index] })
        if (value.failed) states = withFailure(states, index, { message: "down" }, NOW)
      })
      const order = readOrder(states, NOW, lag)
      const highest = endpoints.filter((value) => !value.failed).reduce((top, value) => (value.head > top ? value.head : top), -1n)
      const fit = endpoints.flatMap((value, index) => (!value.failed && !value.outvoted && value.head >= highest - lag ? [index] : []))
      if (fit.length > 0) expect(order).toEqual(fit)
      for (const index of order) expect(endpoints[index].failed).toBe(false)
      expect([...order].sort((a, b) => a - b)).toEqual(order)
    }))
  })

  it("publishes origins only, numbered when two share one, and redacts URLs in errors", () => {
    let states = initialStates(["https://rpc.example/v2/KEY1", "https://rpc.example/v2/KEY2"])
    states = withFailure(states, 1, { message: "GET https://rpc.example/v2/KEY2/blocks: HTTP 500" }, NOW)
    const published = JSON.stringify(reportOf(states, 0, 12n, 3n))
    expect(published).not.toContain("KEY")
    const shown = endpointsOf({ endpoints: JSON.stringify(reportOf(states, 0, 12n, 3n)) })
    expect(shown.endpoints.map((endpoint) => endpoint.endpoint)).toEqual(["https://rpc.example", "https://rpc.example #2"])
    expect(shown.endpoints[1].lastError).toBe("GET https://rpc.example HTTP 500")
    expect(shown.disagreementHeight).toBe("12")
    expect(endpointsOf({ endpoints: "not json" })).toEqual({ endpoints: [], disagreementHeight: null })
  })

  it("reads Retry-After as seconds or as an HTTP date", () => {
    expect(retryAfterMillis("3", NOW)).toBe(3_000)
    expect(retryAfterMillis(new Date(NOW + 5_000).toUTCString(), NOW)).toBe(5_000)
    expect(retryAfterMillis(undefined, NOW)).toBeUndefined()
    expect(retryAfterMillis("soon", NOW)).toBeUndefined()
  })
})
