/**
 * Lighthouse 12.2.3 (its default mobile profile: a slow 4G and a 4× slower CPU, simulated) on a list
 * of pages, scored for performance, accessibility and best practices: the payer's page and the
 * dashboard's views (scripts/bench/pages.ts). Debian's chromium (CHROMIUM_PATH to override), started
 * by chrome-launcher with no network but loopback. A scene is `{ name, url, prepare?, keepStorage? }`
 * where `prepare` gets the browser's CDP port to set a session up first (a cookie, say).
 */
import { existsSync } from "node:fs"
import * as chromeLauncher from "chrome-launcher"
import lighthouse from "lighthouse"

export interface ScoredScene {
  readonly name: string
  readonly url: string
  /** Run against the browser (its debugging port) before the page is scored. */
  readonly prepare?: (port: number) => Promise<void>
  /** Keep the origin's storage (a signed-in page's localStorage) instead of Lighthouse's reset. */
  readonly keepStorage?: boolean
}

export interface Score {
  readonly name: string
  readonly performance: number
  readonly accessibility: number
  readonly bestPractices: number
  readonly bytes: number
  /** The audits below 1 that cost points, by their id. */
  readonly failing: ReadonlyArray<string>
}

const CATEGORIES = ["performance", "accessibility", "best-practices"] as const

/** Scores each scene in one headless chromium, one after the other (the machine is shared). */
export const scorePages = async (scenes: ReadonlyArray<ScoredScene>): Promise<ReadonlyArray<Score>> => {
  const chromePath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
  if (!existsSync(chromePath)) throw new Error(`no browser at ${chromePath} (apt-get install -y chromium)`)
  const chrome = await chromeLauncher.launch({
    chromePath,
    chromeFlags: ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
  })
  const scores: Array<Score> = []
  try {
    for (const scene of scenes) {
      await scene.prepare?.(chrome.port)
      const result = await lighthouse(scene.url, { port: chrome.port, output: "json", logLevel: "error", onlyCategories: [...CATEGORIES],
        disableStorageReset: scene.keepStorage === true })
      if (result === undefined) throw new Error(`lighthouse gave no result for ${scene.name}`)
      const { categories, audits } = result.lhr
      const score = (id: string) => Math.round((categories[id]?.score ?? 0) * 100)
      const failing = CATEGORIES.flatMap((id) => categories[id]?.auditRefs ?? [])
        .filter((ref) => ref.weight > 0 && audits[ref.id]?.score !== null && (audits[ref.id]?.score ?? 1) < 1)
        .map((ref) => ref.id)
      scores.push({
        name: scene.name,
        performance: score("performance"),
        accessibility: score("accessibility"),
        bestPractices: score("best-practices"),
        bytes: Number(audits["total-byte-weight"]?.numericValue ?? 0),
        failing
      })
    }
  } finally {
    chrome.kill()
  }
  return scores
}

/** The scores as a table, with the audits that cost points. */
export const scoreTable = (scores: ReadonlyArray<Score>) =>
  [
    "| page | performance | accessibility | best practices | KiB | audits below 1 |",
    "|---|---|---|---|---|---|",
    ...scores.map((score) =>
      `| ${score.name} | ${score.performance} | ${score.accessibility} | ${score.bestPractices} | ${(score.bytes / 1024).toFixed(1)} | ${score.failing.join(", ")} |`
    )
  ].join("\n")
