import { type Address, createPublicClient, createWalletClient, type Hex, http, zeroHash, concat } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { CANONICAL_FACTORY, CREATE2_DEPLOYER, ForwarderFactory } from "../../payments/Forwarders.ts"

export interface FactoryDeployment {
  readonly address: Address
  /** How it got there: through the deterministic deployment proxy, an ordinary deployment, or it already was. */
  readonly how: "create2-proxy" | "create" | "already-deployed"
  readonly transactionHash: Hex | null
}

/**
 * Deploys the forwarder factory from the relayer account: through the deterministic deployment
 * proxy when the chain has it (the factory then has the same address on every such chain, the
 * service's default), otherwise by an ordinary deployment whose address must be configured.
 */
export const deployForwarderFactory = async (rpcUrl: string, chainId: number, relayerKey: Hex): Promise<FactoryDeployment> => {
  const transport = http(rpcUrl, { retryCount: 0 })
  const chain = { id: chainId, name: `chain ${chainId}`, nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [rpcUrl] } } }
  const read = createPublicClient({ transport, chain, cacheTime: 0 })
  const write = createWalletClient({ transport, chain, account: privateKeyToAccount(relayerKey) })
  const hasCode = async (address: Address) => {
    const code = await read.getCode({ address })
    return code !== undefined && code !== "0x"
  }
  if (await hasCode(CANONICAL_FACTORY)) return { address: CANONICAL_FACTORY, how: "already-deployed", transactionHash: null }
  if (await hasCode(CREATE2_DEPLOYER)) {
    const hash = await write.sendTransaction({ to: CREATE2_DEPLOYER, data: concat([zeroHash, ForwarderFactory.bytecode]) })
    const receipt = await read.waitForTransactionReceipt({ hash })
    if (receipt.status !== "success" || !(await hasCode(CANONICAL_FACTORY))) throw new Error(`the factory deployment ${hash} failed`)
    return { address: CANONICAL_FACTORY, how: "create2-proxy", transactionHash: hash }
  }
  const hash = await write.deployContract({ abi: ForwarderFactory.abi, bytecode: ForwarderFactory.bytecode })
  const receipt = await read.waitForTransactionReceipt({ hash })
  if (receipt.status !== "success" || receipt.contractAddress == null) throw new Error(`the factory deployment ${hash} failed`)
  return { address: receipt.contractAddress, how: "create", transactionHash: hash }
}
