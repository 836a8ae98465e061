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
  'confirmations', p.confirmations, 'late', p.late, 'observedAt', p.observed_at, 'confirmedAt', p.confirmed_at,
  'invalidatedAt', p.invalidated_at, 'invalidationReason', p.invalidation_reason) ORDER BY p.observed_at, p.id)
  FROM payments p WHERE p.invoice_id = i.id), '[]'::json)`

/** The select list of an invoice read: its columns, its options and its payments (alias `i`). */
export const INVOICE_READ_COLUMNS = `i.*, ${OPTIONS_JSON} AS options_json, ${PAYMENTS_JSON} AS payments_json`
