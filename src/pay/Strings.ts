/** Every text of the payment page, per language; the page picks one from Accept-Language. */
export const STRINGS = {
  en: {
    title: "Payment",
    issuedBy: "Issued by",
    billTo: "Billed to",
    invoice: "Invoice",
    amountDue: "Amount due",
    payWith: "Pay with",
    sendExactly: "Send exactly",
    on: "on",
    toAddress: "to this address",
    copy: "Copy",
    copied: "Copied",
    copyAmount: "Copy amount",
    copyAddress: "Copy address",
    openInWallet: "Open in wallet",
    payWithWallet: "Pay with wallet",
    walletNone: "No browser wallet found. Scan the code or copy the address instead.",
    walletSending: "Confirm the payment in your wallet…",
    walletSent: "Payment sent. It will show here once the network sees it.",
    walletFailed: "The wallet did not send the payment",
    openInTab: "Wallet extension not opening here? Open this page in a new tab",
    timeLeft: "Time left to pay",
    dueOn: "Due on",
    gracePeriod: "Payments are accepted until",
    received: "Received",
    remaining: "Remaining",
    partiallyPaid: "Partially paid: send the remaining amount below.",
    awaiting: "Waiting for your payment.",
    detected: "Payment received on {network}, waiting for confirmations",
    detectedWait: "Confirmation usually takes about {minutes} min. You may close this page: the seller is told when it is confirmed.",
    confirmations: "confirmations",
    sendOnly: "Send only {asset} on {network} to this address. Other tokens, or {asset} on another network, cannot be credited.",
    token: "Token",
    networkLabel: "Network",
    yourPayments: "Your payments",
    viewTransaction: "View the transaction on the {network} explorer",
    confirmedTransaction: "confirmed",
    receipt: "Receipt",
    amountPaid: "Amount paid",
    paidAt: "Paid on",
    transaction: "Transaction",
    recordedBySeller: "Recorded by the seller",
    receivedHere: "Received in this option",
    remainingHere: "Still to send",
    confirmed: "Paid. Thank you!",
    paidOutOfBand: "Paid. Thank you!",
    returnToShop: "Return to the shop",
    returningSoon: "You will be taken back to the shop in a few seconds.",
    expired: "This invoice has expired. Do not send a payment to it; ask the seller for a new one.",
    voided: "This invoice was cancelled. Do not send a payment to it.",
    notFoundTitle: "Invoice not found",
    notFound: "There is no invoice at this address. Check the link you were given.",
    options: "Payment options",
    scan: "Scan with your wallet app",
    payRestElsewhere: "Pay the rest another way",
    late: {
      received: "We received your payment, but it arrived after the deadline.",
      partialReceived: "We received part of your payment, but the rest did not arrive before the deadline.",
      review: "The seller will review it. If they accept it, this invoice is marked paid; if they close it unpaid, you can ask for a refund on this page.",
      noMore: "Do not send another payment to this invoice.",
      closedUnpaid: "The seller closed this invoice unpaid and did not keep your payment: you can ask for a refund below.",
      receivedAt: "Received on"
    },
    refund: {
      title: "Refund",
      overpayment: "You paid more than this invoice asks for: the difference can be sent back to you.",
      closeUnpaid: "The seller closed this invoice without keeping your payment: it can be sent back to you.",
      offer: "Request a refund",
      amountOn: "{amount} {asset} on {network}",
      choose: "Which payment to refund",
      address: "Your {network} address for the refund",
      addressHint: {
        evm: "An address starting with 0x, 42 characters long. Use an address of your own wallet: a refund sent to an exchange may be lost.",
        solana: "A Solana wallet address (32 to 44 letters and digits). Use an address of your own wallet.",
        bitcoin: "A Bitcoin address starting with bc1, 1 or 3. Use an address of your own wallet."
      },
      addressFormat: "This does not look like a {network} address.",
      email: "Email (optional, to hear when it is sent)",
      submit: "Request the refund",
      sending: "Sending your request…",
      failed: "The request could not be sent",
      requestedAt: "Requested on",
      to: "to",
      status: {
        requested: "Requested: the seller has been asked to send it.",
        sent: "Sent: waiting for the network's confirmations.",
        completed: "Refunded.",
        rejected: "Declined by the seller."
      },
      note: "The seller's note",
      transaction: "Transaction"
    },
    network: { bitcoin: "Bitcoin", ethereum: "Ethereum", arbitrum: "Arbitrum", base: "Base", solana: "Solana" }
  },
  es: {
    title: "Pago",
    issuedBy: "Emitida por",
    billTo: "Facturar a",
    invoice: "Factura",
    amountDue: "Importe a pagar",
    payWith: "Pagar con",
    sendExactly: "Envía exactamente",
    on: "en",
    toAddress: "a esta dirección",
    copy: "Copiar",
    copied: "Copiado",
    copyAmount: "Copiar importe",
    copyAddress: "Copiar dirección",
    openInWallet: "Abrir en la billetera",
    payWithWallet: "Pagar con la billetera",
    walletNone: "No se encontró ninguna billetera en el navegador. Escanea el código o copia la dirección.",
    walletSending: "Confirma el pago en tu billetera…",
    walletSent: "Pago enviado. Aparecerá aquí cuando la red lo vea.",
    walletFailed: "La billetera no envió el pago",
    openInTab: "¿La extensión de tu billetera no se abre aquí? Abre esta página en una pestaña nueva",
    timeLeft: "Tiempo restante para pagar",
    dueOn: "Vence el",
    gracePeriod: "Se aceptan pagos hasta el",
    received: "Recibido",
    remaining: "Pendiente",
    partiallyPaid: "Pago parcial: envía el importe pendiente.",
    awaiting: "Esperando tu pago.",
    detected: "Pago recibido en {network}, esperando confirmaciones",
    detectedWait: "La confirmación suele tardar unos {minutes} min. Puedes cerrar esta página: el vendedor recibe el aviso cuando se confirme.",
    confirmations: "confirmaciones",
    sendOnly: "Envía solo {asset} en {network} a esta dirección. Otros tokens, o {asset} en otra red, no se pueden abonar.",
    token: "Token",
    networkLabel: "Red",
    yourPayments: "Tus pagos",
    viewTransaction: "Ver la transacción en el explorador de {network}",
    confirmedTransaction: "confirmada",
    receipt: "Recibo",
    amountPaid: "Importe pagado",
    paidAt: "Pagado el",
    transaction: "Transacción",
    recordedBySeller: "Registrado por el vendedor",
    receivedHere: "Recibido con esta forma de pago",
    remainingHere: "Falta enviar",
    confirmed: "Pagado. ¡Gracias!",
    paidOutOfBand: "Pagado. ¡Gracias!",
    returnToShop: "Volver a la tienda",
    returningSoon: "Volverás a la tienda en unos segundos.",
    expired: "Esta factura ha vencido. No envíes ningún pago; pide una nueva al vendedor.",
    voided: "Esta factura fue anulada. No envíes ningún pago.",
    notFoundTitle: "Factura no encontrada",
    notFound: "No hay ninguna factura en esta dirección. Revisa el enlace que recibiste.",
    options: "Formas de pago",
    scan: "Escanea con tu billetera",
    payRestElsewhere: "Paga el resto de otra forma",
    late: {
      received: "Recibimos tu pago, pero llegó después del plazo.",
      partialReceived: "Recibimos parte de tu pago, pero el resto no llegó antes del plazo.",
      review: "El vendedor lo revisará. Si lo acepta, esta factura queda pagada; si la cierra sin cobrar, podrás pedir un reembolso en esta página.",
      noMore: "No envíes otro pago a esta factura.",
      closedUnpaid: "El vendedor cerró esta factura sin cobrar y no se quedó con tu pago: puedes pedir un reembolso abajo.",
      receivedAt: "Recibido el"
    },
    refund: {
      title: "Reembolso",
      overpayment: "Pagaste más de lo que pide esta factura: la diferencia se te puede devolver.",
      closeUnpaid: "El vendedor cerró esta factura sin quedarse con tu pago: se te puede devolver.",
      offer: "Solicitar un reembolso",
      amountOn: "{amount} {asset} en {network}",
      choose: "Qué pago reembolsar",
      address: "Tu dirección de {network} para el reembolso",
      addressHint: {
        evm: "Una dirección que empieza por 0x, de 42 caracteres. Usa una dirección de tu propia billetera: un reembolso enviado a un exchange puede perderse.",
        solana: "Una dirección de billetera de Solana (de 32 a 44 letras y números). Usa una dirección de tu propia billetera.",
        bitcoin: "Una dirección de Bitcoin que empieza por bc1, 1 o 3. Usa una dirección de tu propia billetera."
      },
      addressFormat: "Esto no parece una dirección de {network}.",
      email: "Correo electrónico (opcional, para saber cuándo se envía)",
      submit: "Solicitar el reembolso",
      sending: "Enviando tu solicitud…",
      failed: "No se pudo enviar la solicitud",
      requestedAt: "Solicitado el",
      to: "a",
      status: {
        requested: "Solicitado: se ha pedido al vendedor que lo envíe.",
        sent: "Enviado: esperando las confirmaciones de la red.",
        completed: "Reembolsado.",
        rejected: "Rechazado por el vendedor."
      },
      note: "Nota del vendedor",
      transaction: "Transacción"
    },
    network: { bitcoin: "Bitcoin", ethereum: "Ethereum", arbitrum: "Arbitrum", base: "Base", solana: "Solana" }
  }
} as const

export type Language = keyof typeof STRINGS

/** A text with its `{name}` placeholders filled in. */
export const fill = (template: string, values: Readonly<Record<string, string>>) => template.replace(/\{(\w+)\}/g, (whole, name: string) => values[name] ?? whole)
export type Strings = (typeof STRINGS)[Language]

/** The best supported language of an Accept-Language header (q-values honoured); English by default. */
export const languageOf = (acceptLanguage: string | undefined): Language => {
  if (acceptLanguage === undefined) return "en"
  const ranked = acceptLanguage.split(",").map((part, index) => {
    const [tag, ...params] = part.trim().toLowerCase().split(";")
    const q = params.map((param) => param.trim()).find((param) => param.startsWith("q="))
    return { language: tag.split("-")[0], q: q === undefined ? 1 : Number(q.slice(2)), index }
  }).filter((entry) => entry.q > 0).sort((a, b) => b.q - a.q || a.index - b.index)
  return (ranked.find((entry) => entry.language in STRINGS)?.language as Language | undefined) ?? "en"
}
