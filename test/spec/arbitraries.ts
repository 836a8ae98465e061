import fc from "fast-check"
import { type Command, describeCommand, MINUTE } from "./ReferenceModel.ts"

/**
 * Random commands for the model-based tests. Each generated command prints in the spec's words
 * (fast-check's counterexample and the shrunk path read as a story).
 */

const spoken = (command: Command): Command => Object.assign(Object.create({ [fc.toStringMethod]: () => describeCommand(command) }), command)

const chainTime = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(0, 90_000).map((offsetMs) => ({ from: "now" as const, offsetMs })) },
  { weight: 1, arbitrary: fc.constantFrom(-60_000, -1, 0, 1).map((offsetMs) => ({ from: "deadline" as const, offsetMs })) }
)

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("pay" as const),
      option: fc.constantFrom(0, 0, 1),
      // whole amounts, amounts to the cent, and what is still owed exactly, one unit short or one over
      usd: fc.oneof(
        { weight: 2, arbitrary: fc.constantFrom<number | "rest">(10, 25, 50, 75, 100, 100, 120) },
        { weight: 2, arbitrary: fc.integer({ min: 1, max: 12_000 }).map((cents) => cents / 100) },
        { weight: 2, arbitrary: fc.constant<number | "rest">("rest") }
      ),
      unit: fc.constantFrom<-1 | 0 | 1>(-1, 0, 0, 1),
      confirmations: fc.constantFrom(0, 0, 12, 20),
      chainTime,
      mempool: fc.boolean(),
      twice: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) })
    })
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("observe" as const),
      payment: fc.nat(5),
      confirmations: fc.constantFrom<number | "same">("same", 0, 12, 20, 30),
      mempool: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) })
    })
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("duplicate" as const), payment: fc.nat(5) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("invalidate" as const), payment: fc.nat(5), reorgPoint: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("settleReorg" as const), payment: fc.nat(5) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("advance" as const), ms: fc.constantFrom(1, MINUTE, 30 * MINUTE, 61 * MINUTE) }) },
  { weight: 2, arbitrary: fc.constant({ kind: "sweep" as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("watcher" as const),
      network: fc.constantFrom("ethereum", "base"),
      chainTime: fc.constantFrom(null, { from: "now" as const, offsetMs: 0 }, { from: "deadline" as const, offsetMs: -60_000 }, { from: "deadline" as const, offsetMs: 0 })
    })
  },
  { weight: 1, arbitrary: fc.constant({ kind: "void" as const }) },
  { weight: 1, arbitrary: fc.constantFrom("paid by bank transfer", "cash").map((note) => ({ kind: "record" as const, note })) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("close" as const),
      action: fc.constantFrom("accept_late_payment" as const, "mark_paid_out_of_band" as const, "close_unpaid" as const),
      note: fc.constantFrom("reviewed", "customer called")
    })
  }
)

/** Steps toward a late payment, its confirmations and its acceptance, which uniform steps reach too seldom. */
const lateArb: fc.Arbitrary<Command> = fc.constantFrom<Command>(
  { kind: "advance", ms: 61 * MINUTE },
  { kind: "sweep" },
  { kind: "pay", option: 0, usd: 100, confirmations: 12, chainTime: { from: "now", offsetMs: 0 } },
  { kind: "close", action: "accept_late_payment", note: "accepted" }
)

const DAY = 24 * 60 * MINUTE

/** For a due-date invoice (7 days, 3 of grace): time passes by days, into the grace period and beyond it. */
const daysArb: fc.Arbitrary<Command> = fc.constantFrom<Command>(
  { kind: "advance", ms: 7 * DAY + MINUTE },
  { kind: "advance", ms: DAY },
  { kind: "advance", ms: 3 * DAY }
)

/** A command sequence of one invoice (after its creation); `dueDate`: its merchant's timing is due-date. */
export const sequenceArb = (maxLength: number, dueDate = false) =>
  fc.array(
    fc.oneof({ weight: 5, arbitrary: commandArb }, { weight: 1, arbitrary: lateArb }, { weight: dueDate ? 2 : 0, arbitrary: daysArb }).map(spoken),
    { minLength: 1, maxLength }
  )
