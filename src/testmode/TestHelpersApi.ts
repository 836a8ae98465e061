import { TestHelpersGroup as ContractTestHelpersGroup } from "../../contract/TestHelpersApi.ts"
import { DatabaseGate } from "../http/DatabaseGate.ts"

/** The contract's test helpers (issue #55), gated on the database like every group but liveness. */
export const TestHelpersGroup = ContractTestHelpersGroup.middleware(DatabaseGate)
