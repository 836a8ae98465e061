import { and, type AnyStateNode, createMachine, not, or, stateIn, type StateValue } from "xstate"
import { invoiceMachine } from "./InvoiceMachine.ts"
import { EVENTS_SECTION, README_INTRO, USAGE_SECTION } from "./StatechartReadme.ts"

export interface TransitionRow {
  readonly region: string
  readonly from: string
  readonly event: string
  readonly guard: string
  readonly to: string
  readonly effects: string
}

const describeGuard = (guard: unknown): string => {
  if (guard === undefined || guard === null) return ""
  if (typeof guard === "string") return guard
  if (typeof guard === "function") {
    const named = guard as { check?: unknown; guards?: ReadonlyArray<unknown>; stateValue?: unknown; name?: string }
    if (named.guards !== undefined) {
      const kind = named.name?.includes("or") ? " or " : " and "
      return named.guards.map((inner) => {
        const text = describeGuard(inner)
        return / (and|or) /.test(text) ? `(${text})` : text
      }).join(kind)
    }
    if (named.stateValue !== undefined) return `in ${JSON.stringify(named.stateValue)}`
    return named.name ?? "guard"
  }
  const object = guard as { type?: string; params?: Record<string, unknown> }
  const params = object.params === undefined ? "" : `(${Object.values(object.params).join(", ")})`
  return `${object.type ?? "guard"}${params}`
}

const describeAction = (action: unknown): string => {
  const object = action as { type?: string; params?: Record<string, unknown> }
  const params = object.params === undefined ? "" : ` ${Object.values(object.params).join(", ")}`
  return `${object.type ?? "action"}${params}`
}

const leafPath = (node: AnyStateNode, regionRoot: AnyStateNode) => node.path.slice(regionRoot.path.length).join(".")

const collect = (region: AnyStateNode): Array<TransitionRow> => {
  const rows: Array<TransitionRow> = []
  const visit = (node: AnyStateNode) => {
    for (const [event, transitions] of node.transitions) {
      for (const transition of transitions) {
        const targets = transition.target?.map((target) => leafPath(target, region)) ?? [leafPath(node, region)]
        rows.push({
          region: region.key,
          from: leafPath(node, region) || region.key,
          event,
          guard: describeGuard(transition.guard),
          to: targets.join(", "),
          effects: transition.actions.map(describeAction).join("; ")
        })
      }
    }
    for (const child of Object.values(node.states)) visit(child)
  }
  visit(region)
  return rows
}

export const transitionRows = (): Array<TransitionRow> => Object.values(invoiceMachine.root.states).flatMap((region) => collect(region))

const mermaidId = (path: string) => path.replaceAll(".", "_")

/** Compound states as Mermaid composite states, so that a parent's transitions visibly leave its children. */
const mermaidComposites = (node: AnyStateNode, region: AnyStateNode, indent: string): Array<string> =>
  Object.values(node.states).flatMap((child) => {
    const id = mermaidId(leafPath(child, region))
    const lines = node === region ? [] : [`${indent}state "${child.key}" as ${id}`]
    if (Object.keys(child.states).length > 0) lines.push(`${indent}state ${id} {`, ...mermaidComposites(child, region, `${indent}  `), `${indent}}`)
    return lines
  })

export const mermaid = (regionKey: string): string => {
  const region = invoiceMachine.root.states[regionKey]
  const lines = ["stateDiagram-v2", ...mermaidComposites(region, region, "  ")]
  const initial = region.initial?.target?.[0]
  if (initial !== undefined) lines.push(`  [*] --> ${mermaidId(leafPath(initial, region))}`)
  for (const row of collect(region)) {
    const label = row.guard === "" ? row.event : `${row.event} [${row.guard}]`
    for (const to of row.to.split(", ")) lines.push(`  ${mermaidId(row.from)} --> ${mermaidId(to)}: ${label}`)
  }
  return `${lines.join("\n")}\n`
}

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

/** A guard as data: named guards stay as they are, and/or/not/stateIn become `{ type, params }`. */
const guardToJson = (guard: unknown): Json => {
  if (typeof guard !== "function") return guard as Json
  const helper = guard as { guards?: ReadonlyArray<unknown>; guard?: unknown; stateValue?: Json; name?: string }
  if (helper.stateValue !== undefined) return { type: "xstate.stateIn", params: { stateValue: helper.stateValue } }
  if (helper.guards !== undefined) {
    return { type: helper.name?.includes("or") ? "xstate.or" : "xstate.and", params: { guards: helper.guards.map(guardToJson) } }
  }
  if (helper.guard !== undefined) return { type: "xstate.not", params: { guard: guardToJson(helper.guard) } }
  throw new Error(`guard ${helper.name ?? "?"} cannot be exported as data`)
}

/** A guard as `machineConfigJson` writes it: a name, or a helper's `{ type, params }`. */
interface GuardJson {
  readonly type?: string
  readonly params?: { readonly guards?: ReadonlyArray<unknown>; readonly guard?: unknown; readonly stateValue?: StateValue }
}
type GuardHelperArgument = Parameters<typeof not>[0]
type MachineConfig = Parameters<typeof createMachine>[0]
type MachineImplementations = Parameters<typeof createMachine>[1]

const guardFromJson = (guard: unknown): unknown => {
  const data = guard as GuardJson | null
  const nested = () => (data?.params?.guards ?? []).map(guardFromJson) as Array<GuardHelperArgument>
  switch (data?.type) {
    case "xstate.and":
      return and(nested())
    case "xstate.or":
      return or(nested())
    case "xstate.not":
      return not(guardFromJson(data.params?.guard) as GuardHelperArgument)
    case "xstate.stateIn":
      return stateIn(data.params?.stateValue ?? {})
    default:
      return guard
  }
}

/** The value with every `guard` field replaced by `map` of it, at any depth. */
const mapGuards = (value: unknown, map: (guard: unknown) => unknown): unknown => {
  if (Array.isArray(value)) return value.map((item) => mapGuards(item, map))
  if (value === null || typeof value !== "object") return value
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, key === "guard" ? map(item) : mapGuards(item, map)]))
}

/** The machine's config as JSON that `createMachine` accepts (and Stately's editor imports): guards and actions as data. */
export const machineConfigJson = (): Json => mapGuards(invoiceMachine.config, guardToJson) as Json

/**
 * The machine built back from `statecharts/invoice.json`: `xstate.and`/`or`/`not`/`stateIn` guard
 * data become XState's helpers again, and the named guards and actions are the source machine's.
 * `createMachine(json)` alone stops at the first guarded event ("Guard 'onTimeIs' is not implemented").
 */
export const machineFromConfigJson = (config: Json) => createMachine(mapGuards(config, guardFromJson) as MachineConfig, invoiceMachine.implementations as MachineImplementations)

export const statechartFiles = (): Record<string, string> => {
  const rows = transitionRows()
  const regions = Object.keys(invoiceMachine.root.states)
  const table = [
    "| region | from | event | guard | to | effects |",
    "|---|---|---|---|---|---|",
    ...rows.map((row) => `| ${row.region} | ${row.from} | ${row.event} | ${row.guard.replaceAll("|", "\\|")} | ${row.to} | ${row.effects} |`)
  ].join("\n")
  const readme = [
    ...README_INTRO,
    ...EVENTS_SECTION,
    ...USAGE_SECTION,
    ...regions.flatMap((region) => [
      `## ${region}`,
      "",
      "```mermaid",
      mermaid(region).trimEnd(),
      "```",
      "",
      `Drawn: [invoice-${region}.svg](invoice-${region}.svg)`,
      ""
    ]),
    "## Transitions",
    "",
    table,
    ""
  ].join("\n")
  return {
    "invoice.json": `${JSON.stringify(machineConfigJson(), null, 2)}\n`,
    ...Object.fromEntries(regions.map((region) => [`invoice-${region}.mmd`, mermaid(region)])),
    "README.md": readme
  }
}
