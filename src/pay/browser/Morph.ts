/// <reference lib="dom" />
/// <reference lib="dom.iterable" />

/**
 * Brings the page's markup to what the server renders now, changing only what differs: an element
 * that stays keeps its identity (focus, scroll, a typed value, a QR code's SVG untouched), a text
 * that changed is rewritten in place (inside an `aria-live` region, a screen reader hears it). The
 * server stays the one source of the markup (src/pay/PayPageView.ts); the script never builds it.
 * An element with `data-keep` holds what the script drew into it (the refund section, a wallet's
 * message, the countdown, a time shown in the payer's zone): it is kept as it is while the new page
 * has it too with the same `data-keep` value (a time's value is its instant).
 */
export const morph = (current: Element, next: Element): void => {
  morphAttributes(current, next)
  morphChildren(current, next)
}

const morphAttributes = (current: Element, next: Element) => {
  for (const { name } of [...current.attributes]) {
    // A <details> the payer opened stays open.
    if (!next.hasAttribute(name) && !(name === "open" && current instanceof HTMLDetailsElement)) current.removeAttribute(name)
  }
  for (const { name, value } of next.attributes) if (current.getAttribute(name) !== value) current.setAttribute(name, value)
}

/** Two nodes are the same thing on the page when they have the same kind, tag and id. */
const sameKind = (a: Node, b: Node) => a.nodeType === b.nodeType && a.nodeName === b.nodeName && (!(a instanceof Element) || a.id === (b as Element).id)

const morphNode = (current: Node, next: Node) => {
  if (current instanceof Element && next instanceof Element) {
    const keep = current.getAttribute("data-keep")
    if (keep !== null && keep === next.getAttribute("data-keep")) return
    if (current.isEqualNode(next)) return
    morph(current, next)
  } else if (current.nodeValue !== next.nodeValue) current.nodeValue = next.nodeValue
}

const morphChildren = (current: Element, next: Element) => {
  const wanted = [...next.childNodes]
  let index = 0
  for (const node of wanted) {
    const here = current.childNodes[index]
    if (here !== undefined && sameKind(here, node)) morphNode(here, node)
    else if (here !== undefined && findLater(current, index, node) !== undefined) {
      // Something was removed before this node: drop what lies between.
      const match = findLater(current, index, node)!
      while (current.childNodes[index] !== match) current.childNodes[index].remove()
      morphNode(match, node)
    } else current.insertBefore(document.importNode(node, true), here ?? null)
    index++
  }
  while (current.childNodes.length > wanted.length) current.lastChild!.remove()
}

/** A later sibling of the same kind that carries an id (only ids say it is the same element). */
const findLater = (parent: Element, from: number, node: Node): ChildNode | undefined => {
  if (!(node instanceof Element) || node.id === "") return undefined
  for (let index = from + 1; index < parent.childNodes.length; index++) {
    const candidate = parent.childNodes[index]
    if (sameKind(candidate, node)) return candidate
  }
  return undefined
}
