import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { describe, expect, it } from "vitest"

const ROOT = join(import.meta.dirname, "..", "..")
const DOCS = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)]

const read = (file: string) => readFileSync(join(ROOT, file), "utf8")
/** The text outside fenced code blocks, where links and headings count. */
const prose = (markdown: string) => markdown.replace(/^```[\s\S]*?^```/gm, "")

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
const anchors = (markdown: string): Set<string> => {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const base = heading.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-")
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    result.add(count === 0 ? base : `${base}-${count}`)
  }
  return result
}

const links = (file: string) =>
  [...prose(read(file)).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1])
    .filter((target) => !/^[a-z]+:/i.test(target))

describe("documentation", () => {
  it("keeps the README at most 300 lines and docs/decisions.md at most 400", () => {
    expect(read("README.md").split("\n").length).toBeLessThanOrEqual(300)
    expect(read("docs/decisions.md").split("\n").length).toBeLessThanOrEqual(400)
  })

  it("has relative links whose files and #anchors exist", () => {
    const broken: Array<string> = []
    for (const file of DOCS) {
      for (const target of links(file)) {
        const [path, anchor] = target.split("#") as [string, string | undefined]
        const resolved = path === "" ? join(ROOT, file) : join(ROOT, dirname(file), decodeURI(path))
        if (!existsSync(resolved)) {
          broken.push(`${file}: ${target} (no such file)`)
          continue
        }
        if (anchor !== undefined && resolved.endsWith(".md") && !anchors(readFileSync(resolved, "utf8")).has(anchor)) {
          broken.push(`${file}: ${target} (no heading #${anchor} in ${relative(ROOT, resolved)})`)
        }
      }
    }
    expect(broken).toEqual([])
  })
})
