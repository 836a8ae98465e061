import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, normalize, relative } from "node:path"
import { describe, expect, it } from "vitest"

const SRC = join(import.meta.dirname, "..", "..", "src")

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
const layerOf = (file: string) => relative(SRC, file).split("/")[0]

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

  it("points one way: domain depends on nothing, lifecycle on domain only, and neither nor db on http", () => {
    const wrong: Array<string> = []
    for (const [file, imports] of typeGraph) {
      const from = layerOf(file)
      for (const target of imports.map(layerOf)) {
        if (from === "domain" && target !== "domain") wrong.push(`${relative(SRC, file)} -> ${target}`)
        if (from === "lifecycle" && target !== "lifecycle" && target !== "domain") wrong.push(`${relative(SRC, file)} -> ${target}`)
        if (from === "db" && !["db", "config", "domain"].includes(target)) wrong.push(`${relative(SRC, file)} -> ${target}`)
      }
    }
    expect(wrong).toEqual([])
  })

  it("reaches http/ only from the HTTP edge: the features' Api and Http modules, the composition and http/ itself", () => {
    const edge = (file: string) => layerOf(file) === "http" || /(Api|Http)\.ts$/.test(file) || ["main.ts", "App.ts"].includes(relative(SRC, file))
    const wrong = [...typeGraph].flatMap(([file, imports]) =>
      edge(file) ? [] : imports.filter((target) => layerOf(target) === "http").map((target) => `${relative(SRC, file)} -> ${relative(SRC, target)}`)
    )
    expect(wrong).toEqual([])
  })
})
