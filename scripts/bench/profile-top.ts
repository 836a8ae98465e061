/**
 * Summarises a V8 CPU profile (`node --cpu-prof`, or `npm run bench -- --profile`): the
 * functions with the most self time, and self time per package / source folder.
 *
 *   node --experimental-strip-types scripts/bench/profile-top.ts <file.cpuprofile> [count]
 */
import { readFileSync } from "node:fs"

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
}
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const shortUrl = (url: string) => {
  const modules = url.lastIndexOf("node_modules/")
  if (modules >= 0) return url.slice(modules + "node_modules/".length)
  const work = url.indexOf("/src/")
  if (work >= 0) return url.slice(work + 1)
  const scripts = url.indexOf("/scripts/")
  if (scripts >= 0) return url.slice(scripts + 1)
  return url.replace(/^file:\/\//, "")
}

/** The package (node_modules/<name> or <@scope/name>), the project folder (src/<folder>), node:internal, or (native). */
export const ownerOf = (url: string) => {
  if (url === "") return "(V8 / native: GC, idle, program)"
  const modules = url.lastIndexOf("node_modules/")
  if (modules >= 0) {
    const parts = url.slice(modules + "node_modules/".length).split("/")
    if (parts[0].startsWith("@")) return `${parts[0]}/${parts[1]}`
    if (parts[0] === "effect") return `effect/${parts[2] === "unstable" ? parts[3] : parts[2]?.replace(/\.js$/, "") ?? ""}`
    return parts[0]
  }
  if (url.startsWith("node:")) return "node: (built-ins)"
  const src = url.indexOf("/src/")
  if (src >= 0) return `src/${url.slice(src + 5).split("/")[0]}`
  return shortUrl(url)
}

export const selfTimes = (file: string) => {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const perNode = new Map<number, number>()
  profile.samples.forEach((id, index) => perNode.set(id, (perNode.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)))
  let total = 0
  const perFunction = new Map<string, number>()
  const perOwner = new Map<string, number>()
  for (const [id, micros] of perNode) {
    const frame = byId.get(id)!.callFrame
    total += micros
    if (frame.functionName === "(idle)") continue
    const name = `${frame.functionName || "(anonymous)"} ${frame.url === "" ? "" : `${shortUrl(frame.url)}:${frame.lineNumber + 1}`}`.trim()
    perFunction.set(name, (perFunction.get(name) ?? 0) + micros)
    const owner = ownerOf(frame.url)
    perOwner.set(owner, (perOwner.get(owner) ?? 0) + micros)
  }
  const idle = [...perNode].filter(([id]) => byId.get(id)!.callFrame.functionName === "(idle)").reduce((sum, [, micros]) => sum + micros, 0)
  return { total, idle, perFunction, perOwner }
}

export const topSelfTime = (file: string, count = 25): Array<string> => {
  const { total, idle, perFunction, perOwner } = selfTimes(file)
  const busy = total - idle
  const line = (name: string, micros: number) => `${(micros / 1000).toFixed(0).padStart(7)} ms ${((100 * micros) / busy).toFixed(1).padStart(5)}%  ${name}`
  return [
    `profiled ${(total / 1e6).toFixed(1)} s, idle ${(idle / 1e6).toFixed(1)} s, busy ${(busy / 1e6).toFixed(1)} s (percentages of busy time)`,
    "by function (self time):",
    ...[...perFunction].sort((a, b) => b[1] - a[1]).slice(0, count).map(([name, micros]) => `  ${line(name, micros)}`),
    "by package or source folder (self time):",
    ...[...perOwner].sort((a, b) => b[1] - a[1]).slice(0, count).map(([name, micros]) => `  ${line(name, micros)}`)
  ]
}

if (import.meta.main) {
  const [file, count] = process.argv.slice(2)
  if (file === undefined) {
    console.error("usage: profile-top.ts <file.cpuprofile> [count]")
    process.exit(2)
  }
  for (const line of topSelfTime(file, count === undefined ? 25 : Number(count))) console.log(line)
}
