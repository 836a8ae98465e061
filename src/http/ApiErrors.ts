import { type ApiError, BadGateway, BadRequest, Conflict, Forbidden, NotFound, ServiceUnavailable, TooManyRequests, Unauthorized } from "../../contract/ApiErrors.ts"

/** The API's error schemas are the contract's (contract/ApiErrors.ts), shared with the SDK; here, what the service reads of them. */
export * from "../../contract/ApiErrors.ts"

type ApiErrorClass = (new(props: { readonly error: string }) => ApiError) & { readonly ast: { readonly annotations?: { readonly httpApiStatus?: unknown } | undefined } }

const CLASSES: ReadonlyArray<ApiErrorClass> = [BadRequest, Unauthorized, Forbidden, NotFound, Conflict, BadGateway, ServiceUnavailable, TooManyRequests]

const annotatedStatus = (errorClass: ApiErrorClass): number => {
  const status = errorClass.ast.annotations?.httpApiStatus
  return typeof status === "number" ? status : 500
}

const CLASS_BY_STATUS = new Map(CLASSES.map((errorClass) => [annotatedStatus(errorClass), errorClass]))

/** The status an error answers with: its schema's `httpApiStatus` annotation. */
export const statusOf = (error: ApiError): number => annotatedStatus(error.constructor as ApiErrorClass)

/** The error of that status with that message (a stored answer replayed); Conflict for a status no class declares. */
export const errorOfStatus = (status: number, message: string): ApiError => new (CLASS_BY_STATUS.get(status) ?? Conflict)({ error: message })
