import { HDKey } from "@scure/bip32"

/** SLIP-132 zpub version bytes (BIP84 account keys); xpub uses the library default. */
const ZPUB_VERSIONS = { private: 0x04b2430c, public: 0x04b24746 }

export const parseAccountKey = (extendedKey: string): HDKey => HDKey.fromExtendedKey(extendedKey, extendedKey.startsWith("zpub") ? ZPUB_VERSIONS : undefined)
