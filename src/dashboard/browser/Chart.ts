/**
 * The lifecycle statechart as SVG, from the layout the server made with elkjs at start (see
 * ../LifecycleChart.ts): fitted to the width of the screen, with zoom buttons and panning (drag,
 * or scroll the frame). On an invoice's page it marks the invoice's path: the states it visited,
 * the transitions it took (numbered in order), and the state it is in now.
 */

import type { WebhookEventName } from "../../domain/Statuses.ts"
import type { Chart, ChartEdge, ChartNode, LifecycleCharts } from "../LifecycleChart.ts"
import { eventWords, stateWords } from "../Words.ts"
import type { Invoice, TimelineEntry } from "./Api.ts"
import { svg } from "./Ui.ts"

let charts: Promise<LifecycleCharts> | undefined
/** The layout, fetched once per page load (an immutable, content-hashed asset). */
export const lifecycleCharts = (): Promise<LifecycleCharts> =>
  charts ??= fetch(document.body.dataset.lifecycle ?? "").then((response) => {
    if (!response.ok) throw new Error(`The statechart's layout did not load (HTTP ${response.status})`)
    return response.json() as Promise<LifecycleCharts>
  })

/** One step of an invoice's path: the state reached, and the outbox event that reported it (none for the start). */
export interface Step {
  readonly state: string
  readonly event: string | null
  readonly at: string | null
}

/** An invoice's path through one region of the chart. */
export interface Trail {
  readonly steps: ReadonlyArray<Step>
  /** The state it is in now (the last step's). */
  readonly current: string
}

/** The outbox events that report a status, and the status each reports. */
const STATUS_OF_EVENT: Partial<Record<WebhookEventName, string>> = {
  invoice_created: "awaiting_payment",
  invoice_partially_paid: "partially_paid",
  invoice_payment_detected: "payment_detected",
  invoice_confirmed: "confirmed",
  invoice_expired: "expired",
  invoice_voided: "voided",
  invoice_payment_recorded: "paid_out_of_band"
}

const follow = (initial: string, reached: ReadonlyArray<Step>, current: string): Trail => {
  const steps: Array<Step> = [{ state: initial, event: null, at: null }]
  for (const step of reached) if (step.state !== steps.at(-1)!.state) steps.push(step)
  // A transition that writes no event (evidence withdrawn: back to awaiting payment) shows only in the current state.
  if (steps.at(-1)!.state !== current) steps.push({ state: current, event: null, at: null })
  return { steps, current }
}

/** The invoice's statuses, in order, from its outbox timeline; the last is its status now. */
export const statusTrail = (invoice: Invoice, timeline: ReadonlyArray<TimelineEntry>): Trail =>
  follow(
    "awaiting_payment",
    timeline.flatMap((entry) => {
      const state = STATUS_OF_EVENT[entry.event as WebhookEventName]
      return state === undefined || entry.event === "invoice_created" ? [] : [{ state, event: entry.event, at: entry.at }]
    }),
    invoice.status
  )

/** The invoice's exception states, in order: an opened exception's type is known for the latest only. */
export const exceptionTrail = (invoice: Invoice, timeline: ReadonlyArray<TimelineEntry>): Trail => {
  const current = invoice.exceptionStatus === null ? "none" : invoice.exceptionStatus === "open" ? `open.${invoice.exceptionType}` : "closed"
  const events = timeline.filter((entry) => entry.event === "invoice_exception_opened" || entry.event === "invoice_exception_closed")
  const lastOpened = events.findLastIndex((entry) => entry.event === "invoice_exception_opened")
  return follow(
    "none",
    events.map((entry, index) => ({
      state: entry.event === "invoice_exception_closed" ? "closed" : index === lastOpened && invoice.exceptionType !== null ? `open.${invoice.exceptionType}` : "open",
      event: entry.event,
      at: entry.at
    })),
    current
  )
}

/** A state and the states that contain it: `open.late_payment` is in `open`. */
const withParents = (state: string) => state.split(".").map((_, index, parts) => parts.slice(0, index + 1).join("."))

/** The edge of the chart a step took: the same states, or a parent's transition (`open` → `closed`), or into a child. */
const edgeOf = (edges: ReadonlyArray<ChartEdge>, from: string, to: string) =>
  edges.find((edge) => edge.from === from && edge.to === to) ??
    edges.find((edge) => withParents(from).includes(edge.from) && (edge.to === to || edge.to.startsWith(`${to}.`) || withParents(to).includes(edge.to)))

const ZOOMS = [1, 1.5, 2, 3, 4]

/** The chart's edges the trail took, each with the numbers of the steps that took it. */
const takenEdges = (chart: Chart, trail: Trail | undefined) => {
  const taken = new Map<string, Array<number>>()
  trail?.steps.forEach((step, index) => {
    if (index === 0) return
    const edge = edgeOf(chart.edges, trail.steps[index - 1].state, step.state)
    if (edge !== undefined) taken.set(edge.id, [...(taken.get(edge.id) ?? []), index])
  })
  return taken
}

/** A state's box and label, marked `visited` and `current` along the trail. */
const stateGroup = (node: ChartNode, visited: ReadonlySet<string>, trail: Trail | undefined) => {
  const classes = ["state", node.compound ? "compound" : "", node.final ? "final" : "", visited.has(node.id) ? "visited" : "", trail?.current === node.id ? "current" : ""]
    .filter((name) => name !== "")
  const group = svg("g", { class: classes.join(" "), "data-state": node.id }, svg("title", {}, `${node.label} (${node.id})`),
    svg("rect", { x: node.x, y: node.y, width: node.width, height: node.height, rx: node.compound ? 10 : 18 }))
  if (node.final) group.append(svg("rect", { class: "inner", x: node.x + 3, y: node.y + 3, width: node.width - 6, height: node.height - 6, rx: 15 }))
  group.append(
    node.compound
      ? svg("text", { x: node.x + 12, y: node.y + 22, class: "compound-label" }, node.label)
      : svg("text", { x: node.x + node.width / 2, y: node.y + node.height / 2 + 4.5, "text-anchor": "middle" }, node.label)
  )
  if (node.initial) {
    group.append(svg("circle", { class: "initial", cx: node.x - 10, cy: node.y + node.height / 2, r: 5 }),
      svg("path", { class: "initial", d: `M${node.x - 5} ${node.y + node.height / 2} L${node.x} ${node.y + node.height / 2}` }))
  }
  if (trail?.current === node.id) group.setAttribute("aria-current", "step")
  return group
}

/** A transition's arrow and labels; `steps` numbers it where the trail took it. */
const transitionGroup = (edge: ChartEdge, steps: ReadonlyArray<number> | undefined) => {
  const group = svg("g", { class: steps === undefined ? "transition" : "transition taken", "data-edge": edge.id, "data-from": edge.from, "data-to": edge.to },
    svg("title", {}, edge.detail), svg("path", { d: edge.path }), svg("polygon", { points: edge.arrow }))
  for (const label of edge.labels) {
    group.append(svg("rect", { class: "label-bg", x: label.x, y: label.y, width: label.width, height: label.height }),
      svg("text", { x: label.x + 3, y: label.y + 11 }, ...label.lines.map((line, index) =>
        svg("tspan", { x: label.x + 3, dy: index === 0 ? 0 : 15, class: index === 0 ? "event" : "guard" }, line)
      )))
  }
  if (steps !== undefined) {
    group.setAttribute("data-steps", steps.join(" "))
    const start = /^M([\d.]+) ([\d.]+)/.exec(edge.path)!
    group.append(svg("circle", { class: "step", cx: Number(start[1]), cy: Number(start[2]), r: 9 }),
      svg("text", { class: "step", x: Number(start[1]), y: Number(start[2]) + 4, "text-anchor": "middle" }, steps.join(",")))
  }
  return group
}

/** The region's SVG drawing, with the trail marked. */
const chartDrawing = (chart: Chart, caption: string, trail: Trail | undefined) => {
  const visited = new Set(trail?.steps.flatMap((step) => withParents(step.state)) ?? [])
  const taken = takenEdges(chart, trail)
  const drawing = svg("svg", {
    class: "statechart",
    viewBox: `0 0 ${chart.width} ${chart.height}`,
    width: chart.width,
    height: chart.height,
    role: "img",
    "aria-label": caption,
    "data-region": chart.region
  })
  for (const node of chart.nodes) drawing.append(stateGroup(node, visited, trail))
  // Edges under the states: a state's box stays readable where an edge passes it.
  for (const edge of chart.edges) drawing.prepend(transitionGroup(edge, taken.get(edge.id)))
  drawing.prepend(svg("title", {}, caption))
  return drawing
}

const zoomButton = (label: string, text: string, action: () => void) => {
  const element = document.createElement("button")
  element.type = "button"
  element.className = "zoom"
  element.setAttribute("aria-label", label)
  element.textContent = text
  element.addEventListener("click", action)
  return element
}

/** Dragging with a mouse pans the frame; touch screens pan by scrolling it natively. */
const panByDragging = (frame: HTMLElement) => {
  let drag: { x: number; y: number; left: number; top: number } | null = null
  frame.addEventListener("pointerdown", (event) => {
    if (event.pointerType !== "mouse") return
    drag = { x: event.clientX, y: event.clientY, left: frame.scrollLeft, top: frame.scrollTop }
    frame.setPointerCapture(event.pointerId)
    frame.classList.add("dragging")
  })
  frame.addEventListener("pointermove", (event) => {
    if (drag === null) return
    frame.scrollLeft = drag.left - (event.clientX - drag.x)
    frame.scrollTop = drag.top - (event.clientY - drag.y)
  })
  const stop = () => {
    drag = null
    frame.classList.remove("dragging")
  }
  frame.addEventListener("pointerup", stop)
  frame.addEventListener("pointercancel", stop)
}

/** The zoom buttons of a drawing in its frame: fitted to the frame's width at level 0, keeping the centre in view when zooming. */
const zoomControls = (frame: HTMLElement, drawing: SVGElement, chart: Chart) => {
  let zoom = 0
  const fit = () => Math.min(1, Math.max(frame.clientWidth - 2, 1) / chart.width)
  const apply = (level: number) => {
    const centre = { x: (frame.scrollLeft + frame.clientWidth / 2) / Math.max(frame.scrollWidth, 1),
      y: (frame.scrollTop + frame.clientHeight / 2) / Math.max(frame.scrollHeight, 1) }
    zoom = Math.max(0, Math.min(ZOOMS.length - 1, level))
    const scale = zoom === 0 ? fit() : ZOOMS[zoom]
    drawing.setAttribute("width", String(Math.round(chart.width * scale)))
    drawing.setAttribute("height", String(Math.round(chart.height * scale)))
    drawing.dataset.zoom = String(zoom)
    frame.scrollLeft = centre.x * frame.scrollWidth - frame.clientWidth / 2
    frame.scrollTop = centre.y * frame.scrollHeight - frame.clientHeight / 2
    out.disabled = zoom === 0
    into.disabled = zoom === ZOOMS.length - 1
  }
  const out = zoomButton("Zoom out", "−", () => apply(zoom - 1))
  const into = zoomButton("Zoom in", "+", () => apply(zoom + 1))
  const whole = zoomButton("Fit to width", "Fit", () => apply(0))
  // Fitted when the frame first gets its width, and again when it changes (a phone turned, a folded chart opened).
  new ResizeObserver(() => {
    if (zoom === 0) apply(0)
  }).observe(frame)
  apply(0)
  const tools = document.createElement("div")
  tools.className = "chart-tools"
  tools.append(out, whole, into)
  return tools
}

/**
 * The chart of one region in a scrolling frame; with a trail, the invoice's path is marked with
 * classes (`visited`, `current`, `taken`) and attributes (`aria-current`, `data-steps`).
 */
export const chartFigure = (chart: Chart, caption: string, trail?: Trail): HTMLElement => {
  const drawing = chartDrawing(chart, caption, trail)
  const frame = document.createElement("div")
  frame.className = "chart-frame"
  frame.tabIndex = 0
  frame.setAttribute("role", "group")
  frame.setAttribute("aria-label", `${caption}: scroll or drag to pan`)
  frame.append(drawing)
  panByDragging(frame)
  const figure = document.createElement("figure")
  figure.className = "chart"
  const figcaption = document.createElement("figcaption")
  figcaption.textContent = caption
  figure.append(figcaption, zoomControls(frame, drawing, chart), frame)
  return figure
}

/** The trail as words, for readers of the text (and screen readers), numbered as the chart's steps are from 0 (the start). */
export const trailSteps = (trail: Trail, when: (iso: string | null) => string) =>
  trail.steps.map((step) => {
    const state = stateWords(step.state.split(".").at(-1)!)
    if (step.event === null) return state
    const event = eventWords(step.event)
    return `${state} (${event === state ? "" : `${event}, `}${when(step.at)})`
  })
