import { describe, expect, it } from "vitest"
import { BadGateway, BadRequest, Conflict, errorOfStatus, Forbidden, NotFound, ServiceUnavailable, statusOf, TooManyRequests, Unauthorized } from "../../src/http/ApiErrors.ts"

describe("the HTTP errors' statuses", () => {
  it("come from each schema's httpApiStatus annotation, and a stored answer is rebuilt from its status and text", () => {
    const classes = [BadRequest, Unauthorized, Forbidden, NotFound, Conflict, TooManyRequests, BadGateway, ServiceUnavailable]
    expect(classes.map((errorClass) => statusOf(new errorClass({ error: "x" })))).toEqual([400, 401, 403, 404, 409, 429, 502, 503])
    for (const errorClass of classes) {
      const replayed = errorOfStatus(statusOf(new errorClass({ error: "x" })), "the first answer")
      expect(replayed).toBeInstanceOf(errorClass)
      expect(replayed.error).toBe("the first answer")
    }
    expect(errorOfStatus(418, "teapot")).toBeInstanceOf(Conflict)
  })
})
