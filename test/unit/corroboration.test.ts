import { describe, expect, it } from "vitest"
import { answerFor, decide, isSettled, type Vote } from "../../src/chains/source/Corroboration.ts"

// Endpoint 0 reports a transfer; the others answer about it (issue #52: the majority rule).
const votes = (...answers: Array<[number, Vote["answer"]]>): Array<Vote> => answers.map(([index, answer]) => ({ index, answer }))

describe("the majority rule of corroboration", () => {
  it("one witness against one reporter is a dispute: no verdict, no one blamed", () => {
    expect(decide(0, votes([1, "different"]))).toEqual({ verdict: "disputed", outvoted: [], deniers: [1] })
  })

  it("a witness that shows it confirms it (two of two)", () => {
    expect(decide(0, votes([1, "same"]))).toEqual({ verdict: "confirmed", outvoted: [], deniers: [] })
  })

  it("a majority denying it refuses it and outvotes the reporter", () => {
    expect(decide(0, votes([1, "different"], [2, "different"]))).toMatchObject({ verdict: "refused", outvoted: [0] })
  })

  it("a majority showing it confirms it and outvotes the denier (an omitting or lying witness)", () => {
    expect(decide(0, votes([1, "different"], [2, "same"]))).toMatchObject({ verdict: "confirmed", outvoted: [1] })
  })

  it("with no other answer it is unanswered: detected, not corroborated, no one blamed", () => {
    expect(decide(0, [])).toMatchObject({ verdict: "unanswered", outvoted: [] })
    expect(decide(0, votes([1, "unknown"], [2, "unknown"]))).toMatchObject({ verdict: "unanswered", outvoted: [] })
  })

  it("asked again, a reporter that cannot show what it reported counts against it", () => {
    expect(decide(0, votes([0, "different"], [1, "different"]))).toMatchObject({ verdict: "refused", outvoted: [0] })
    expect(decide(0, votes([0, "same"], [1, "different"]))).toMatchObject({ verdict: "disputed", outvoted: [] })
    expect(decide(0, votes([0, "unknown"], [1, "same"]))).toMatchObject({ verdict: "confirmed" })
  })

  it("a reporter no longer known (-1) still counts as one voice", () => {
    expect(decide(-1, votes([0, "different"]))).toMatchObject({ verdict: "disputed", outvoted: [] })
    expect(decide(-1, votes([0, "different"], [1, "different"]))).toMatchObject({ verdict: "refused", outvoted: [-1] })
    expect(decide(-1, votes([0, "same"]))).toMatchObject({ verdict: "confirmed" })
  })

  it("stops asking once the endpoints not asked yet cannot change the majority", () => {
    expect(isSettled(0, votes([1, "same"]), 1)).toBe(true)
    expect(isSettled(0, votes([1, "different"]), 1)).toBe(false)
    expect(isSettled(0, votes([1, "different"], [2, "different"]), 0)).toBe(true)
    expect(isSettled(0, votes([1, "same"]), 3)).toBe(false)
    expect(isSettled(0, [], 0)).toBe(true)
  })
})

describe("one endpoint's answer about a reported transfer", () => {
  const reported = { transactionHash: "0xab", outputIndex: 1, token: "0xT", toAddress: "0xTo", amountAtomic: 5n, blockHeight: 10n, blockHash: "0xB" }
  const seen = { ...reported, blockHash: "0xB" as string | undefined }

  it("same, different, or unknown while it is behind", () => {
    expect(answerFor(reported, [seen], 12n)).toBe("same")
    expect(answerFor(reported, [{ ...seen, amountAtomic: 4n }], 12n)).toBe("different")
    expect(answerFor(reported, undefined, 12n)).toBe("different")
    expect(answerFor(reported, undefined, 9n)).toBe("unknown")
  })
})
