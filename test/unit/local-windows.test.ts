import { describe, expect, it } from "vitest"
import { makeLocalWindows } from "../../src/accounts/LocalWindows.ts"
import { instanceShare } from "../../src/accounts/RateLimits.ts"

const MINUTE = 60_000

describe("in-process rate-limit windows", () => {
  it("admit the limit, refuse one more with the time left, and admit again once the window has passed", () => {
    const windows = makeLocalWindows(1_000)
    for (let index = 0; index < 100; index++) expect(windows.take("k", 100, MINUTE, 0).taken).toBe(true)
    expect(windows.take("k", 100, MINUTE, 1_000)).toEqual({ taken: false, ttl: MINUTE - 1_000 })
    expect(windows.take("other", 100, MINUTE, 1_000).taken).toBe(true)
    expect(windows.take("k", 100, MINUTE, MINUTE).taken).toBe(true)
  })

  it("take back a token given back (a request the shared store refused)", () => {
    const windows = makeLocalWindows(1_000)
    expect(windows.take("k", 2, MINUTE, 0).taken).toBe(true)
    expect(windows.take("k", 2, MINUTE, 0).taken).toBe(true)
    windows.giveBack("k", 2, MINUTE, 0)
    expect(windows.take("k", 2, MINUTE, 0).taken).toBe(true)
    expect(windows.take("k", 2, MINUTE, 0).taken).toBe(false)
  })

  it("do not grow without bound: expired windows are swept, and past the cap the oldest goes", () => {
    const windows = makeLocalWindows(1_000_000)
    // One new client address every millisecond for ten minutes: about a minute's worth stay.
    for (let now = 0; now < 10 * MINUTE; now++) windows.take(`ip-${now}`, 1, MINUTE, now)
    expect(windows.size()).toBeLessThanOrEqual(2 * MINUTE + 1)
    const capped = makeLocalWindows(5_000)
    for (let index = 0; index < 20_000; index++) capped.take(`ip-${index}`, 10, MINUTE, 0)
    expect(capped.size()).toBeLessThanOrEqual(5_000)
    expect(capped.size()).toBeGreaterThanOrEqual(4_500)
  })

  it("share a limit among instances, at least one request each", () => {
    expect(instanceShare(100, 1)).toBe(100)
    expect(instanceShare(100, 3)).toBe(33)
    expect(instanceShare(5, 10)).toBe(1)
  })
})
