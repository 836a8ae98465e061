/**
 * Fixed-window counters in this process's memory, with the shared store's semantics (each token
 * extends its key's window by `window / limit`; a request over the limit is not counted), so that
 * for one instance they never refuse what the store would admit.
 *
 * Memory is bounded: expired windows are swept whenever the map has doubled since the last sweep,
 * and at `maxKeys` windows the oldest tenth is dropped (those keys start fresh windows).
 */
export interface LocalWindows {
  /** Counts one token of `key` if its window has room under `limit`; otherwise the milliseconds until it frees one. */
  readonly take: (key: string, limit: number, windowMillis: number, now: number) => { readonly taken: true } | { readonly taken: false; readonly ttl: number }
  /** Gives back a token taken by `take` for a request that was refused after all. */
  readonly giveBack: (key: string, limit: number, windowMillis: number, now: number) => void
  /** Windows held (expired ones included until the next sweep). */
  readonly size: () => number
}

interface Window {
  count: number
  expiresAt: number
}

const MIN_SWEEP_SIZE = 1_024

export const makeLocalWindows = (maxKeys: number): LocalWindows => {
  const windows = new Map<string, Window>()
  let sweepAt = MIN_SWEEP_SIZE

  const sweep = (now: number) => {
    for (const [key, window] of windows) if (window.expiresAt <= now) windows.delete(key)
    sweepAt = Math.max(MIN_SWEEP_SIZE, windows.size * 2)
  }

  // A tenth at a time: one pass over the map's head, not one per new key.
  const dropOldest = (count: number) => {
    let left = count
    for (const key of windows.keys()) {
      if (left-- === 0) break
      windows.delete(key)
    }
  }

  const live = (key: string, now: number): Window | undefined => {
    const window = windows.get(key)
    if (window === undefined || window.expiresAt > now) return window
    windows.delete(key)
    return undefined
  }

  const open = (key: string, now: number): Window => {
    if (windows.size >= sweepAt) sweep(now)
    if (windows.size >= maxKeys) dropOldest(Math.ceil(maxKeys / 10))
    const window = { count: 0, expiresAt: now }
    windows.set(key, window)
    return window
  }

  return {
    take: (key, limit, windowMillis, now) => {
      const window = live(key, now) ?? open(key, now)
      if (window.count + 1 > limit) return { taken: false, ttl: window.expiresAt - now }
      window.count += 1
      window.expiresAt += windowMillis / limit
      return { taken: true }
    },
    giveBack: (key, limit, windowMillis, now) => {
      const window = live(key, now)
      if (window === undefined || window.count === 0) return
      window.count -= 1
      window.expiresAt -= windowMillis / limit
    },
    size: () => windows.size
  }
}
