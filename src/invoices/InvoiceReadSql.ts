/**
 * SQL text of the invoice reads, shared by InvoiceRepo and the bench's raw baseline
 * (scripts/bench/raw-server.ts), which must run the same statements. No imports: the baseline
 * loads it without the service's runtime.
 */

/**
 * An invoice with its options and payments in one round trip. Keys are written in camelCase and
 * exact amounts as text, so the row decoders read them like ordinary columns.
 */
export const OPTION_OBJECT = `json_build_object(
  'id', o.id, 'invoiceId', o.invoice_id, 'railType', o.rail_type, 'assetCode', o.asset_code, 'network', o.network,
  'tokenContract', o.token_contract, 'decimals', o.decimals, 'quotedAtomic', o.quoted_atomic::text,
  'quoteRate', o.quote_rate, 'destinationAddress', o.destination_address, 'paymentUri', o.payment_uri,
  'qrCode', o.qr_code, 'status', o.status, 'isDefault', o.is_default, 'optionPayload', o.option_payload,
  'requiredConfirmations', o.required_confirmations)`

const OPTIONS_JSON = `COALESCE((SELECT json_agg(${OPTION_OBJECT} ORDER BY o.position)
  FROM payment_options o WHERE o.invoice_id = i.id), '[]'::json)`

const PAYMENTS_JSON = `COALESCE((SELECT json_agg(json_build_object(
  'id', p.id, 'invoiceId', p.invoice_id, 'paymentOptionId', p.payment_option_id, 'assetCode', p.asset_code,
  'network', p.network, 'destinationAddress', p.destination_address, 'transactionHash', p.transaction_hash,
  'outputIndex', p.output_index, 'decimals', p.decimals, 'amountAtomic', p.amount_atomic::text,
  'observedTotalAtomic', p.observed_total_atomic::text, 'usdMicros', p.usd_micros::text,
  'quotedAtomic', p.quoted_atomic::text,
  'confirmations', p.confirmations, 'late', p.late, 'observedAt', p.observed_at, 'confirmedAt', p.confirmed_at,
  'invalidatedAt', p.invalidated_at, 'invalidationReason', p.invalidation_reason) ORDER BY p.observed_at, p.id)
  FROM payments p WHERE p.invoice_id = i.id), '[]'::json)`

const INVOICE_COLUMNS = [
  "id", "merchant_id", "amount_micros", "status", "timing_mode", "expires_after_minutes", "due_after_days",
  "grace_period_days", "due_at", "payable_until_at", "product_name", "issued_by", "bill_to", "redirect_url",
  "merchant_reference", "customer_id", "customer_email", "metadata", "default_payment_option_id",
  "last_payment_option_id", "last_transaction_hash", "received_micros", "confirmed_micros", "confirmations",
  "payment_detected_at", "confirmed_at", "paid_out_of_band_at", "paid_out_of_band_note", "voided_at", "exception_type",
  "exception_status", "exception_action", "exception_note", "exception_closed_at", "created_at",
  "last_payment_observed_at"
]
const camelCase = (name: string) => name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase())

const INVOICE_COLUMNS_CAMEL = INVOICE_COLUMNS.map((name) => (name.includes("_") ? `i.${name} AS "${camelCase(name)}"` : `i.${name}`))

/**
 * The select list of an invoice read (alias `i`): its columns, its options and its payments, every
 * name already in camelCase, so the read runs without the client's per-row name transform.
 */
export const INVOICE_READ_COLUMNS = [
  ...INVOICE_COLUMNS_CAMEL,
  `${OPTIONS_JSON} AS "optionsJson"`,
  `${PAYMENTS_JSON} AS "paymentsJson"`
].join(", ")

/**
 * The select list of an evidence read (invoice `i`, option `o`): the invoice, what evidence needs
 * of the option (not its QR code), the invoice's payments, and the version of the invoice row read
 * (its `xmin`), which every change of the invoice or its payments renews.
 */
export const EVIDENCE_READ_COLUMNS = [
  ...INVOICE_COLUMNS_CAMEL,
  `o.id AS "optionId", o.network AS "optionNetwork", o.asset_code AS "optionAssetCode", o.decimals AS "optionDecimals",
  o.quoted_atomic::text AS "optionQuotedAtomic", o.destination_address AS "optionDestinationAddress",
  o.required_confirmations AS "optionRequiredConfirmations", o.rail_type AS "optionRailType"`,
  `${PAYMENTS_JSON} AS "paymentsJson"`,
  `i.xmin::text AS "version"`
].join(", ")

/**
 * The evidence read under the invoice's row lock, with the version the statement's snapshot saw.
 * When a concurrent change committed while the lock was awaited, READ COMMITTED returns the locked
 * row's newest version but the payments of the older snapshot: the two versions then differ.
 */
export const EVIDENCE_LOCK_COLUMNS = `${EVIDENCE_READ_COLUMNS}, (SELECT s.xmin::text FROM invoices s WHERE s.id = i.id) AS "snapshotVersion"`
