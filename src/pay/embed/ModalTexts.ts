/// <reference lib="dom" />

/**
 * The modal's few texts per language (the payment page's ten), each language one `|`-joined line to
 * keep checkout.js small: dialog label, close button, its accessible name, frame title, the fallback
 * notice and its link.
 */
const TEXTS: Readonly<Record<string, string>> = {
  en: "Payment|Close|Close the payment window|Payment page|The payment page cannot be shown here.|Open the payment page in a new tab",
  es: "Pago|Cerrar|Cerrar la ventana de pago|Página de pago|La página de pago no se puede mostrar aquí.|Abrir la página de pago en una pestaña nueva",
  de: "Zahlung|Schließen|Zahlungsfenster schließen|Zahlungsseite|Die Zahlungsseite kann hier nicht angezeigt werden.|Zahlungsseite in einem neuen Tab öffnen",
  fr: "Paiement|Fermer|Fermer la fenêtre de paiement|Page de paiement|La page de paiement ne peut pas s’afficher ici.|Ouvrir la page de paiement dans un nouvel onglet",
  "pt-BR": "Pagamento|Fechar|Fechar a janela de pagamento|Página de pagamento|A página de pagamento não pode ser exibida aqui.|Abrir a página de pagamento em uma nova aba",
  it: "Pagamento|Chiudi|Chiudi la finestra di pagamento|Pagina di pagamento|La pagina di pagamento non può essere mostrata qui.|Apri la pagina di pagamento in una nuova scheda",
  tr: "Ödeme|Kapat|Ödeme penceresini kapat|Ödeme sayfası|Ödeme sayfası burada gösterilemiyor.|Ödeme sayfasını yeni sekmede aç",
  ja: "お支払い|閉じる|お支払いウィンドウを閉じる|お支払いページ|お支払いページをここに表示できません。|お支払いページを新しいタブで開く",
  "zh-CN": "付款|关闭|关闭付款窗口|付款页面|无法在此显示付款页面。|在新标签页中打开付款页面",
  ru: "Оплата|Закрыть|Закрыть окно оплаты|Страница оплаты|Страницу оплаты нельзя показать здесь.|Открыть страницу оплаты в новой вкладке"
}

/** The shop page's language (its `lang`, else the browser's), as one of the ten: exact tag, else by primary subtag. */
export const modalLanguage = (): string => {
  const wanted = (document.documentElement.lang || navigator.language || "en").toLowerCase()
  const tags = Object.keys(TEXTS)
  return tags.find((tag) => tag.toLowerCase() === wanted) ?? tags.find((tag) => tag.split("-")[0]!.toLowerCase() === wanted.split("-")[0]) ?? "en"
}

export interface ModalTexts {
  readonly label: string
  readonly close: string
  readonly closeLabel: string
  readonly frameTitle: string
  readonly cannotShow: string
  readonly openInTab: string
}

export const modalTexts = (language: string): ModalTexts => {
  const [label, close, closeLabel, frameTitle, cannotShow, openInTab] = (TEXTS[language] ?? TEXTS.en!).split("|") as [string, string, string, string, string, string]
  return { label, close, closeLabel, frameTitle, cannotShow, openInTab }
}
