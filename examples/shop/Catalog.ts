/** What the shop sells. Prices are in USD, as the checkout service's invoices are. */
export interface Product {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly priceUsd: number
}

export const CATALOG: ReadonlyArray<Product> = [
  { id: "tea-set", name: "Tea set", description: "Four cups, a pot and a tray, in blue stoneware.", priceUsd: 42.5 },
  { id: "t-shirt", name: "T-shirt", description: "Organic cotton, printed with the shop's logo.", priceUsd: 19.9 }
]

export const productById = (id: string): Product | undefined => CATALOG.find((product) => product.id === id)
