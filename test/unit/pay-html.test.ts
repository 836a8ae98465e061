import { describe, expect, it } from "vitest"
import { html, joined, raw } from "../../src/pay/Html.ts"

describe("the payer page's html template", () => {
  it("escapes every interpolated text, in text and in attributes, by default", () => {
    const name = `<script>alert("x")</script> & 'co'`
    expect(html`<p title="${name}">${name}</p>`.markup).toBe(
      "<p title=\"&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;co&#39;\">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;co&#39;</p>"
    )
  })

  it("inserts markup only from other templates and raw, joins lists, and drops null, undefined and false", () => {
    const inner = html`<b>${"a<b"}</b>`
    expect(html`<p>${inner}${raw("<svg></svg>")}${[html`<i>1</i>`, "<2>"]}${null}${undefined}${false}${3n}</p>`.markup).toBe(
      "<p><b>a&lt;b</b><svg></svg><i>1</i>&lt;2&gt;3</p>"
    )
    expect(joined([html`<li>${"x"}</li>`, html`<li>y</li>`]).markup).toBe("<li>x</li>\n<li>y</li>")
    expect(String(inner)).toBe("<b>a&lt;b</b>")
  })
})
