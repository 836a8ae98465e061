import { HDKey } from "@scure/bip32"
import { mnemonicToSeedSync } from "@scure/bip39"
import { keccak256, toHex } from "viem"
import { mnemonicToAccount } from "viem/accounts"
import { describe, expect, it } from "vitest"
import { bitcoinAddress, evmDepositAddress } from "../../src/payments/Derivation.ts"
import { forwarderSalt } from "../../src/payments/Forwarders.ts"
import { DEMO_KEYS } from "../../src/demo/DemoMerchant.ts"

const MNEMONIC = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"

describe("address derivation", () => {
  it("matches the BIP84 test vector", () => {
    expect(bitcoinAddress(DEMO_KEYS.bitcoinZpub, 0)).toBe("bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu")
    expect(bitcoinAddress(DEMO_KEYS.bitcoinZpub, 1)).toBe("bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g")
  })

  it("derives EVM deposit addresses that match the private-key derivation", () => {
    const account = HDKey.fromMasterSeed(mnemonicToSeedSync(MNEMONIC)).derive("m/44'/60'/0'")
    expect(account.publicExtendedKey).toBe(DEMO_KEYS.evmXpub)
    for (const index of [0, 1, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 1000, 2 ** 31 - 1]) {
      expect(evmDepositAddress(DEMO_KEYS.evmXpub, index)).toBe(mnemonicToAccount(MNEMONIC, { addressIndex: index }).address)
    }
  })

  it("derives forwarder salts from the option id: keccak256 of its UTF-8 bytes", () => {
    for (const optionId of ["0f2f6c4e-8e0f-4bd3-9f56-1c8a1c3e5d11", crypto.randomUUID(), "é"]) {
      expect(forwarderSalt(optionId)).toBe(keccak256(toHex(optionId)))
    }
  })
})
