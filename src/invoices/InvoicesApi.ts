/** The merchant endpoints' group is the contract's (contract/MerchantApi.ts), shared with the SDK; re-exported for the service's imports. */
export * from "../../contract/MerchantApi.ts"
