/** Part of the merchant API's contract (contract/CheckoutApi.ts), shared with the SDK; re-exported for the service's imports. */
export * from "../../contract/CheckoutApi.ts"
