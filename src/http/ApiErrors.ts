import type { ApiError } from "../../contract/ApiErrors.ts"

/** The API's error schemas are the contract's (contract/ApiErrors.ts), shared with the SDK; here, what the service reads of them. */
export * from "../../contract/ApiErrors.ts"

type ApiErrorClass = (new(props: { readonly error: string }) => ApiError) & { readonly ast: { readonly annotations?: { readonly httpApiStatus?: unknown } | undefined } }

const annotatedStatus = (errorClass: ApiErrorClass): number => {
  const status = errorClass.ast.annotations?.httpApiStatus
  return typeof status === "number" ? status : 500
}

/** The status an error answers with: its schema's `httpApiStatus` annotation. */
export const statusOf = (error: ApiError): number => annotatedStatus(error.constructor as ApiErrorClass)
