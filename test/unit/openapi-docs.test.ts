import { OpenApi } from "effect/http-api"
import { describe, expect, it } from "vitest"
import { Api } from "../../src/Api.ts"
import type { JsonBody } from "../support/Json.ts"

/** The document as its readers see it: JSON, dug into by path. */
const spec: JsonBody = OpenApi.fromApi(Api)
const METHODS = ["get", "put", "post", "delete", "patch"] as const
const operations = Object.entries<JsonBody>(spec.paths).flatMap(([path, item]) =>
  METHODS.flatMap((method) => {
    const operation = item[method]
    return operation === undefined ? [] : [{ path, method, operation }]
  })
)

describe("the OpenAPI document", () => {
  it("declares the API key, the session cookie and the bearer token as security schemes", () => {
    expect(spec.components.securitySchemes).toMatchObject({
      apiKey: { type: "apiKey", in: "header", name: "X-Api-Key" },
      sessionCookie: { type: "apiKey", in: "cookie", name: "checkout_session" },
      bearer: { type: "http", scheme: "bearer" }
    })
  })

  it("says how every operation authenticates: API key first on merchant routes, a session on the dashboard, nothing on public routes", () => {
    for (const { path, method, operation } of operations) {
      const names = (operation.security as Array<Record<string, unknown>>).map((requirement) => Object.keys(requirement)[0])
      const where = `${method.toUpperCase()} ${path}`
      if (path.startsWith("/api/checkout/invoices")) expect(names, where).toEqual(["apiKey", "sessionCookie", "bearer"])
      else if (path.startsWith("/api/checkout/pay/") || path.startsWith("/api/health") || path === "/api/auth/login" || path === "/api/auth/signup") {
        expect(names, where).toEqual([])
      } else expect(names, where).toEqual(["sessionCookie", "bearer"])
    }
  })

  it("describes every operation and gives every error response an example in the {error} shape", () => {
    expect(operations.length).toBeGreaterThan(25)
    for (const { path, method, operation } of operations) {
      const where = `${method.toUpperCase()} ${path}`
      expect(operation.description, where).toEqual(expect.any(String))
      expect(operation.description.length, where).toBeGreaterThan(10)
      for (const [status, response] of Object.entries<JsonBody>(operation.responses)) {
        if (Number(status) < 400) continue
        expect(response.content["application/json"].example, `${where} ${status}`).toEqual({ error: expect.any(String) })
        expect(response.description, `${where} ${status}`).not.toMatch(/^[A-Z][a-zA-Z]+$/)
      }
    }
  })

  it("documents the edge's answers: 413 on every route with a body, 503 on every route that needs the database", () => {
    for (const { path, method, operation } of operations) {
      const where = `${method.toUpperCase()} ${path}`
      if (operation.requestBody !== undefined) expect(operation.responses, where).toHaveProperty("413")
      if (path !== "/api/health") expect(operation.responses, where).toHaveProperty("503")
    }
    expect(spec.paths["/api/checkout/pay/{id}/status"].get.responses["503"].content["application/json"].example.error).toMatch(/retry after/)
    expect(spec.paths["/api/checkout/invoices"].post.responses["413"].content["application/json"].example.error).toMatch(/too large/)
  })

  it("gives request fields their formats and the create body a schema-level example (what \"try it\" clients generate from)", () => {
    const create = spec.paths["/api/checkout/invoices"].post.requestBody.content["application/json"].schema
    expect(create.example).toMatchObject({ amountUsd: 49.99, redirectUrl: "https://shop.example.com/thanks" })
    expect(create.properties.redirectUrl.anyOf[0]).toMatchObject({ type: "string", format: "uri" })
    expect(create.properties.customerEmail.anyOf[0]).toMatchObject({ type: "string", format: "email" })
    expect(spec.paths["/api/checkout/invoices/{id}"].get.parameters[0].schema.format).toBe("uuid")
  })

  it("gives an example body for the merchant writes", () => {
    const create = spec.paths["/api/checkout/invoices"].post.requestBody.content["application/json"]
    expect(create.example).toMatchObject({ amountUsd: 49.99 })
    expect(spec.paths["/api/checkout/invoices/{id}/record-payment"].post.requestBody.content["application/json"].example).toHaveProperty("note")
  })
})
