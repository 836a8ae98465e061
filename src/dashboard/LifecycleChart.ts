import ElkBundle from "elkjs/lib/elk.bundled.js"
import type { ElkExtendedEdge, ElkLabel, ElkNode } from "elkjs/lib/elk-api.js"
import type { AnyStateNode } from "xstate"
import { invoiceMachine } from "../lifecycle/InvoiceMachine.ts"
import { type TransitionRow, transitionRows } from "../lifecycle/StatechartExport.ts"
import { stateWords } from "./Words.ts"

/**
 * The invoice statechart laid out for the dashboard: each region of the machine (`status`,
 * `exception`) is one graph, laid out by ELK's layered algorithm (elkjs, as Stately's editor does)
 * once at server start, from the machine's own states and transition rows, so that the chart
 * follows the machine. The browser only draws the result as SVG (and marks an invoice's path on
 * it). The same input gives the same layout: nodes and edges are given in the machine's order.
 */

export interface ChartNode {
  /** The state's path inside its region: `confirmed`, `open`, `open.late_payment`. */
  readonly id: string
  readonly label: string
  readonly x: number
  readonly y: number
  readonly width: number
  readonly height: number
  /** A compound state drawn as a frame around its children. */
  readonly compound: boolean
  readonly initial: boolean
  readonly final: boolean
}

export interface ChartLabel {
  /** The label's lines: the event, then its guard (a condition or a few a line). */
  readonly lines: ReadonlyArray<string>
  readonly x: number
  readonly y: number
  readonly width: number
  readonly height: number
}

export interface ChartEdge {
  /** `from->to`: every transition between the same two states shares one edge and lists its events. */
  readonly id: string
  readonly from: string
  readonly to: string
  /** SVG path data of the routed edge (absolute coordinates). */
  readonly path: string
  /** The arrow head at the target: three points. */
  readonly arrow: string
  readonly labels: ReadonlyArray<ChartLabel>
  /** The transitions' full text (event, guard, effects), one per line: the edge's tooltip. */
  readonly detail: string
}

export interface Chart {
  readonly region: string
  readonly width: number
  readonly height: number
  readonly nodes: ReadonlyArray<ChartNode>
  readonly edges: ReadonlyArray<ChartEdge>
}

export type LifecycleCharts = ReadonlyArray<Chart>

/** Font metrics the browser's chart uses (style sheet: 13px state names, 11px edge labels). */
const NODE_CHAR = 7.6
const LABEL_CHAR = 6.4
const LABEL_HEIGHT = 15

/** A guard in a few words: the machine's names, without the JSON of `stateIn`. */
export const shortGuard = (guard: string) =>
  guard
    .replace(/in \{"status":"(\w+)"\}/g, "$1")
    .replace(/in \{"exception":\{"open":"(\w+)"\}\}/g, "open.$1")
    .replace(/in \{"exception":"(\w+)"\}/g, "exception $1")
    .replace(/\(expired or voided\)/g, "expired/voided")
    .replace(/onTimeIs\((\w+)\)/g, "on time: $1")
    .replace(/actionIs\((\w+)\)/g, "$1")
    .replace(/totalIsNot\((\w+)\)/g, "total not $1")
    .replace(/totalIs\((\w+)\)/g, "total $1")

const WRAP = 24

/** A transition's label as lines: the event, then the guard's conditions, a line each when long. */
const labelLines = (row: TransitionRow): Array<string> => {
  if (row.guard === "") return [row.event]
  const lines: Array<string> = []
  for (const part of shortGuard(row.guard).split(" and ")) {
    const last = lines.at(-1)
    if (last !== undefined && last.length + part.length + 5 <= WRAP) lines[lines.length - 1] = `${last} and ${part}`
    else lines.push(lines.length === 0 ? part : `and ${part}`)
  }
  return [row.event, ...lines]
}

const statePaths = (node: AnyStateNode, region: AnyStateNode): Array<AnyStateNode> => Object.values(node.states).flatMap((child) => [child, ...statePaths(child, region)])

const pathOf = (node: AnyStateNode, region: AnyStateNode) => node.path.slice(region.path.length).join(".")

const layoutOptions = {
  "elk.algorithm": "layered",
  "elk.direction": "DOWN",
  "elk.hierarchyHandling": "INCLUDE_CHILDREN",
  "elk.edgeRouting": "ORTHOGONAL",
  "elk.layered.nodePlacement.strategy": "NETWORK_SIMPLEX",
  "elk.layered.crossingMinimization.strategy": "LAYER_SWEEP",
  "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
  "elk.spacing.nodeNode": "28",
  "elk.layered.spacing.nodeNodeBetweenLayers": "36",
  "elk.spacing.edgeNode": "14",
  "elk.spacing.edgeEdge": "10",
  "elk.spacing.edgeLabel": "4",
  "elk.edgeLabels.inline": "false",
  "elk.padding": "[top=16,left=16,bottom=16,right=16]",
  "elk.json.shapeCoords": "ROOT",
  "elk.json.edgeCoords": "ROOT",
  "elk.randomSeed": "1"
}

// A CommonJS module: its constructor is both `module.exports` and its `default`; only the latter is typed so.
const ELK = ElkBundle.default

const round = (value: number) => Math.round(value * 10) / 10

type Region = (typeof invoiceMachine.root.states)[string]

/** A state as an ELK node: a leaf sized to its name, a compound state with its name inside, at the top. */
const elkNode = (region: Region) => (node: AnyStateNode): ElkNode => {
  const id = pathOf(node, region)
  const children = Object.values(node.states)
  const label = stateWords(node.key)
  return children.length === 0
    ? { id, width: Math.ceil(label.length * NODE_CHAR + 28), height: 36 }
    : {
      id,
      labels: [{ text: label, width: Math.ceil(label.length * NODE_CHAR + 16), height: 20 }],
      layoutOptions: { "elk.padding": "[top=34,left=14,bottom=14,right=14]", "elk.nodeLabels.placement": "INSIDE V_TOP H_LEFT" },
      children: children.map(elkNode(region))
    }
}

/** The region's transitions grouped by (from, to): one edge each, however many events take it. */
const transitionsByPair = (regionKey: string) => {
  const byPair = new Map<string, Array<TransitionRow>>()
  for (const row of transitionRows().filter((row) => row.region === regionKey)) {
    for (const to of row.to.split(", ")) {
      const key = `${row.from}->${to}`
      byPair.set(key, [...(byPair.get(key) ?? []), { ...row, to }])
    }
  }
  return byPair
}

const elkEdge = ([id, rows]: [string, Array<TransitionRow>]): ElkExtendedEdge => ({
  id,
  sources: [rows[0].from],
  targets: [rows[0].to],
  labels: [...new Set(rows.map((row) => labelLines(row).join("\n")))].map((text): ElkLabel => {
    const lines = text.split("\n")
    return { text, width: Math.ceil(Math.max(...lines.map((line) => line.length)) * LABEL_CHAR + 6), height: lines.length * LABEL_HEIGHT }
  })
})

/** The laid-out states, parents before their children; the region's initial and final states marked. */
const chartNodes = (graph: ElkNode, region: Region, regionKey: string) => {
  const initial = region.initial?.target?.[0]
  const nodes: Array<ChartNode> = []
  const visit = (node: ElkNode, depth: number) => {
    for (const child of node.children ?? []) {
      const compound = (child.children ?? []).length > 0
      const state = statePaths(region, region).find((candidate) => pathOf(candidate, region) === child.id)!
      nodes.push({
        id: child.id,
        label: stateWords(state.key),
        x: round(child.x ?? 0),
        y: round(child.y ?? 0),
        width: round(child.width ?? 0),
        height: round(child.height ?? 0),
        compound,
        initial: depth === 0 && state === initial,
        final: !compound && state.transitions.size === 0 && (state.parent === region) && regionKey === "status"
      })
      visit(child, depth + 1)
    }
  }
  visit(graph, 0)
  return nodes
}

/** Every laid-out edge by id, wherever in the hierarchy ELK put it. */
const laidOutEdges = (graph: ElkNode) => {
  const laidOut = new Map<string, ElkExtendedEdge>()
  const collectEdges = (node: ElkNode) => {
    for (const edge of node.edges ?? []) laidOut.set(edge.id, edge)
    for (const child of node.children ?? []) collectEdges(child)
  }
  collectEdges(graph)
  return laidOut
}

const chartEdge = (id: string, rows: Array<TransitionRow>, edge: ElkExtendedEdge): ChartEdge => {
  const points = (edge.sections ?? []).flatMap((section) => [section.startPoint, ...(section.bendPoints ?? []), section.endPoint])
  const end = points.at(-1)!
  const before = points.at(-2)!
  const dx = Math.sign(round(end.x - before.x))
  const dy = Math.sign(round(end.y - before.y))
  // A head 8 long, 4 either side, pointing along the last segment.
  const arrow = [[end.x, end.y], [end.x - 8 * dx - 4 * dy, end.y - 8 * dy + 4 * dx], [end.x - 8 * dx + 4 * dy, end.y - 8 * dy - 4 * dx]]
  return {
    id,
    from: rows[0].from,
    to: rows[0].to,
    path: points.map((point, index) => `${index === 0 ? "M" : "L"}${round(point.x)} ${round(point.y)}`).join(" "),
    arrow: arrow.map(([x, y]) => `${round(x)},${round(y)}`).join(" "),
    labels: (edge.labels ?? []).map((label) => ({
      lines: (label.text ?? "").split("\n"),
      x: round(label.x ?? 0),
      y: round(label.y ?? 0),
      width: round(label.width ?? 0),
      height: round(label.height ?? 0)
    })),
    detail: rows.map((row) => `${row.event}${row.guard === "" ? "" : ` [${row.guard}]`}${row.effects === "" ? "" : ` / ${row.effects}`}`).join("\n")
  }
}

const layoutRegion = async (elk: InstanceType<typeof ELK>, regionKey: string): Promise<Chart> => {
  const region = invoiceMachine.root.states[regionKey]
  const byPair = transitionsByPair(regionKey)
  const input: ElkNode = { id: regionKey, layoutOptions, children: Object.values(region.states).map(elkNode(region)), edges: [...byPair].map(elkEdge) }
  const graph: ElkNode = await elk.layout(input)
  const nodes = chartNodes(graph, region, regionKey)
  const laidOut = laidOutEdges(graph)
  return {
    region: regionKey,
    width: Math.ceil(graph.width ?? 0),
    height: Math.ceil(graph.height ?? 0),
    nodes,
    edges: [...byPair].map(([id, rows]) => chartEdge(id, rows, laidOut.get(id)!))
  }
}

/** Both regions of the machine, laid out (about 100 ms, once at start). */
export const layoutLifecycle = async (): Promise<LifecycleCharts> => {
  const elk = new ELK()
  const charts: Array<Chart> = []
  // One after the other, so that the result does not depend on timing.
  for (const region of Object.keys(invoiceMachine.root.states)) charts.push(await layoutRegion(elk, region))
  return charts
}
