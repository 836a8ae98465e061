/**
 * The landing view after login: invoices by status, USD received per day over the last 30 days
 * (an SVG bar chart drawn here, no library; its figures also as a table), open exceptions and
 * refunds waiting to be paid. The sums are the server's (`GET /api/dashboard/overview`).
 */

import type { Overview } from "./Api.ts"
import { inMode } from "./Mode.ts"
import { api, cardTable, h, show, statusBadge, svg, usd } from "./Ui.ts"

type Day = Overview["receivedByDay"][number]

const CHART = { width: 640, height: 220, left: 56, right: 8, top: 12, bottom: 28 }

/** A round top for the scale: 1, 2 or 5 times a power of ten, at least the largest day. */
export const scaleTop = (largest: number) => {
  if (largest <= 0) return 1
  const power = 10 ** Math.floor(Math.log10(largest))
  return [1, 2, 5, 10].map((step) => step * power).find((top) => top >= largest)!
}

/** "28 Nov" in the merchant's locale, from a UTC day. */
const dayLabel = (day: string) => new Date(`${day}T00:00:00Z`).toLocaleDateString(undefined, { day: "numeric", month: "short", timeZone: "UTC" })

const axis = (top: number) => {
  const plotHeight = CHART.height - CHART.top - CHART.bottom
  return [0, 0.5, 1].map((share) => {
    const y = CHART.top + plotHeight * (1 - share)
    return svg("g", { class: "axis" }, svg("line", { x1: CHART.left, x2: CHART.width - CHART.right, y1: y, y2: y }),
      svg("text", { x: CHART.left - 6, y: y + 4, "text-anchor": "end" }, usd(top * share).replace(/\.00$/, "")))
  })
}

const bars = (days: ReadonlyArray<Day>, top: number) => {
  const plotWidth = CHART.width - CHART.left - CHART.right
  const plotHeight = CHART.height - CHART.top - CHART.bottom
  const slot = plotWidth / days.length
  return days.map((day, index) => {
    const height = (day.amountUsd / top) * plotHeight
    const x = CHART.left + index * slot
    const last = index === days.length - 1
    // The last label ends at the plot's right edge: centred under its bar it would run past the chart.
    const label = index % 7 === days.length % 7 || last
      ? svg("text", { class: "day", x: last ? x + slot : x + slot / 2, y: CHART.height - 8, "text-anchor": last ? "end" : "middle" }, dayLabel(day.day))
      : null
    return svg("g", { class: "bar", "data-day": day.day, "data-usd": day.amountUsd }, svg("title", {}, `${dayLabel(day.day)}: ${usd(day.amountUsd)}`),
      svg("rect", { x: x + slot * 0.15, y: CHART.top + plotHeight - height, width: slot * 0.7, height: Math.max(height, 0) }), ...(label === null ? [] : [label]))
  })
}

/** The bar chart of USD received per day: a title and a description that sums it up; each bar's title names its day and amount. */
const receivedChart = (days: ReadonlyArray<Day>) => {
  const total = days.reduce((sum, day) => sum + day.amountUsd, 0)
  const best = days.reduce((most, day) => (day.amountUsd > most.amountUsd ? day : most), days[0])
  const description = total === 0
    ? `Nothing received from ${dayLabel(days[0].day)} to ${dayLabel(days.at(-1)!.day)}.`
    : `${usd(total)} received from ${dayLabel(days[0].day)} to ${dayLabel(days.at(-1)!.day)}; the most on ${dayLabel(best.day)}: ${usd(best.amountUsd)}.`
  const top = scaleTop(best.amountUsd)
  return svg("svg", { class: "received-chart", viewBox: `0 0 ${CHART.width} ${CHART.height}`, role: "img", "aria-labelledby": "received-title received-desc" },
    svg("title", { id: "received-title" }, "USD received per day, last 30 days"), svg("desc", { id: "received-desc" }, description), ...axis(top), ...bars(days, top))
}

const receivedTable = (days: ReadonlyArray<Day>) =>
  h("details", { class: "figures" }, h("summary", {}, "The figures as a table"), cardTable(["Day (UTC)", "Received"], days.map((day) =>
    h("tr", { "data-day": day.day }, h("td", {}, day.day), h("td", { class: "number" }, usd(day.amountUsd)))
  )))

const tile = (label: string, count: number, href: string, name: string) =>
  h("a", { class: "card tile", href, "data-tile": name }, h("span", { class: "count" }, String(count)), h("span", {}, label))

const statusList = (overview: Overview) =>
  h("ul", { class: "status-counts" }, ...overview.invoicesByStatus.map(({ status, count }) =>
    h("li", { "data-status": status }, h("a", { href: `#/invoices?status=${status}` }, statusBadge(status), h("span", { class: "count" }, String(count))))
  ))

export const overviewView = async () => {
  const overview = await api<Overview>("GET", inMode("/api/dashboard/overview"))
  show(h("h1", {}, "Overview"), h("p", {}, h("a", { class: "button", href: "#/invoices/new" }, "New invoice")),
    h("div", { class: "tiles" }, tile("open exceptions to review", overview.openExceptions, "#/exceptions", "exceptions"),
      tile("refunds waiting to be paid", overview.waitingRefunds, "#/refunds?status=requested", "refunds")),
    h("section", { class: "card" }, h("h2", {}, "Invoices by status"), statusList(overview)),
    h("section", { class: "card" }, h("h2", {}, "Received per day"), receivedChart(overview.receivedByDay), receivedTable(overview.receivedByDay)))
}
