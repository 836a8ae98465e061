import { MerchantGroup as ContractMerchantGroup } from "../../contract/MerchantApi.ts"
import { DatabaseGate } from "../http/DatabaseGate.ts"

/** The merchant endpoints' group is the contract's (contract/MerchantApi.ts), shared with the SDK; re-exported for the service's imports. */
export * from "../../contract/MerchantApi.ts"

/** The service's merchant group: the contract's, behind the database gate (a server concern: the SDK's client has none). */
export const MerchantGroup = ContractMerchantGroup.middleware(DatabaseGate)
