import { describe, expect, it } from "vitest"
import { BadGateway, BadRequest, Conflict, Forbidden, NotFound, ServiceUnavailable, statusOf, TooManyRequests, Unauthorized } from "../../src/http/ApiErrors.ts"

describe("the HTTP errors' statuses", () => {
  it("come from each schema's httpApiStatus annotation", () => {
    const classes = [BadRequest, Unauthorized, Forbidden, NotFound, Conflict, TooManyRequests, BadGateway, ServiceUnavailable]
    expect(classes.map((errorClass) => statusOf(new errorClass({ error: "x" })))).toEqual([400, 401, 403, 404, 409, 429, 502, 503])
  })
})
