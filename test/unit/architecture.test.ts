import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, normalize, relative, resolve, sep } from "node:path"
import { describe, expect, it } from "vitest"

const ROOT = join(import.meta.dirname, "..", "..")
const SRC = join(ROOT, "src")
const CONTRACT = join(ROOT, "contract")

const files = (directory: string): Array<string> =>
  readdirSync(directory).flatMap((name) => {
    const path = join(directory, name)
    return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : []
  })

const importsOf = (pattern: RegExp) =>
  new Map(files(SRC).map((file) => {
    const source = readFileSync(file, "utf8")
    return [file, [...source.matchAll(pattern)].map((match) => normalize(join(dirname(file), match[1])))] as const
  }))
/** Runtime imports between the service's own modules (type-only imports vanish at run time). */
const graph = importsOf(/^(?:import|export)(?!\s+type\b)[^"';]*?from\s+"(\.[^"]+)"/gm)
/** Every import, type-only ones included: a layer must not even name the types of a layer above it. */
const typeGraph = importsOf(/^(?:import|export)[^"';]*?from\s+"(\.[^"]+)"/gm)
/** A folder of src/, or "contract" for the merchant API's contract beside it (which every layer may use). */
const layerOf = (file: string) => file.startsWith(CONTRACT + sep) ? "contract" : relative(SRC, file).split("/")[0]

describe("the import graph", () => {
  it("has no cycle", () => {
    // Not vacuous: the graph holds the whole service and its edges.
    expect(graph.size).toBeGreaterThan(100)
    expect([...graph.values()].flat().length).toBeGreaterThan(300)
    const state = new Map<string, "open" | "done">()
    const cycles: Array<string> = []
    const visit = (file: string, path: Array<string>) => {
      state.set(file, "open")
      for (const next of graph.get(file) ?? []) {
        if (!graph.has(next)) continue
        if (state.get(next) === "open") cycles.push([...path.slice(path.indexOf(next)), next].map((f) => relative(SRC, f)).join(" -> "))
        else if (state.get(next) === undefined) visit(next, [...path, next])
      }
      state.set(file, "done")
    }
    for (const file of graph.keys()) if (state.get(file) === undefined) visit(file, [file])
    expect(cycles).toEqual([])
  })

  it("points one way: domain depends on nothing but the contract, lifecycle on domain only, and neither nor db on http", () => {
    const wrong: Array<string> = []
    for (const [file, imports] of typeGraph) {
      const from = layerOf(file)
      for (const target of imports.map(layerOf)) {
        if (target === "contract") continue
        if (from === "domain" && target !== "domain") wrong.push(`${relative(SRC, file)} -> ${target}`)
        if (from === "lifecycle" && target !== "lifecycle" && target !== "domain") wrong.push(`${relative(SRC, file)} -> ${target}`)
        if (from === "db" && !["db", "config", "domain"].includes(target)) wrong.push(`${relative(SRC, file)} -> ${target}`)
      }
    }
    expect(wrong).toEqual([])
  })

  it("reaches http/ only from the HTTP edge: the features' Api and Http modules, the composition and http/ itself", () => {
    const edge = (file: string) => layerOf(file) === "http" || /(Api|Http)\.ts$/.test(file) || ["main.ts", "App.ts", "Services.ts"].includes(relative(SRC, file))
    const wrong = [...typeGraph].flatMap(([file, imports]) =>
      edge(file) ? [] : imports.filter((target) => layerOf(target) === "http").map((target) => `${relative(SRC, file)} -> ${relative(SRC, target)}`)
    )
    expect(wrong).toEqual([])
  })

  it("runs one way between folders: no two folders import each other, directly or around a cycle", () => {
    // The analysis of ../shared/tools/folder-graph.mjs: every relative `from "…"` or `import("…")`
    // of a .ts/.tsx file under src/, type-only imports included; a file at the root of src/ is a
    // folder of its own (Api, Http, App, main).
    const sources = (directory: string): Array<string> =>
      readdirSync(directory).flatMap((name) => {
        const path = join(directory, name)
        return statSync(path).isDirectory() ? sources(path) : /\.tsx?$/.test(name) ? [path] : []
      })
    const folderOf = (file: string) => {
      const parts = relative(SRC, file).split(sep)
      return parts.length > 1 ? parts[0] : parts[0].replace(/\.tsx?$/, "")
    }
    const arrows = new Map<string, Set<string>>()
    for (const file of sources(SRC)) {
      const from = folderOf(file)
      for (const match of readFileSync(file, "utf8").matchAll(/(?:from\s+|import\s*\(\s*)["'](\.[^"']+)["']/g)) {
        const target = resolve(dirname(file), match[1])
        if (!target.startsWith(SRC)) continue
        const to = folderOf(target)
        if (to !== from) arrows.set(from, (arrows.get(from) ?? new Set()).add(to))
      }
    }
    expect(arrows.size).toBeGreaterThan(15)
    const reachable = (start: string) => {
      const seen = new Set<string>()
      const stack = [...(arrows.get(start) ?? [])]
      while (stack.length > 0) {
        const folder = stack.pop()!
        if (seen.has(folder)) continue
        seen.add(folder)
        stack.push(...(arrows.get(folder) ?? []))
      }
      return seen
    }
    const twoWay = [...arrows].flatMap(([a, bs]) => [...bs].filter((b) => a < b && arrows.get(b)?.has(a)).map((b) => `${a}<->${b}`))
    const inCycle = [...arrows.keys()].filter((folder) => reachable(folder).has(folder)).sort()
    expect(twoWay).toEqual([])
    expect(inCycle).toEqual([])
  })
})

/** The relative imports of every .ts file under `directory`, as absolute paths, with the importing file. */
const relativeImports = (directory: string) =>
  files(directory).flatMap((file) =>
    [...readFileSync(file, "utf8").matchAll(/(?:from\s+|import\s*\(\s*)["'](\.[^"']+)["']/g)].map((match) => ({ file: relative(ROOT, file),
      target: resolve(dirname(file), match[1]) })
    )
  )

describe("the merchant API's contract (contract/), shared by the service and the SDK", () => {
  it("imports nothing outside itself (effect is its only package)", () => {
    const imports = relativeImports(CONTRACT)
    expect(imports.length).toBeGreaterThan(10)
    expect(imports.filter(({ target }) => !target.startsWith(CONTRACT + sep)).map(({ file, target }) => `${file} -> ${relative(ROOT, target)}`)).toEqual([])
    const packages = files(CONTRACT).flatMap((file) => [...readFileSync(file, "utf8").matchAll(/from\s+"([^".][^"]*)"/g)].map((match) => match[1].split("/")[0]))
    expect(new Set(packages)).toEqual(new Set(["effect"]))
  })

  it("is what the SDK is made of: no file of sdk/ imports the service's src/", () => {
    const imports = relativeImports(join(ROOT, "sdk", "src"))
    expect(imports.some(({ target }) => target.startsWith(CONTRACT + sep))).toBe(true)
    expect(imports.filter(({ target }) => target.startsWith(SRC + sep)).map(({ file, target }) => `${file} -> ${relative(ROOT, target)}`)).toEqual([])
  })
})
