// Compiles MockUSDC.sol with solc-js (wasm inside the npm package, no download) and writes
// MockUSDC.json next to it. The artifact is committed so runtime code never loads solc; a
// unit test recompiles and compares, so source and artifact cannot drift apart.
//   npx tsx src/chain/evm/contracts/compile.ts
import { readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import solc from "solc"

const here = dirname(fileURLToPath(import.meta.url))
export const sourcePath = join(here, "MockUSDC.sol")
export const artifactPath = join(here, "MockUSDC.json")

/** Cancun: supported by anvil, our devnet (ethereumjs, hardfork Cancun), Ethereum, Base and BSC. */
export const evmVersion = "cancun"
export const solcVersion = "0.8.37"

export interface ContractArtifact {
  readonly contractName: string
  readonly compiler: string
  readonly evmVersion: string
  readonly abi: ReadonlyArray<unknown>
  readonly bytecode: `0x${string}`
}

interface SolcOutput {
  readonly errors?: ReadonlyArray<{ readonly severity: string; readonly formattedMessage: string }>
  readonly contracts?: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>
}

export const compileMockUsdc = (): ContractArtifact => {
  const version = String(solc.version())
  if (!version.startsWith(solcVersion)) throw new Error(`solc ${solcVersion} expected, found ${version}`)
  const input = {
    language: "Solidity",
    sources: { "MockUSDC.sol": { content: readFileSync(sourcePath, "utf8") } },
    settings: {
      evmVersion,
      optimizer: { enabled: true, runs: 200 },
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } }
    }
  }
  // solc-js speaks the standard JSON interface as strings; its typings say `any`.
  const output = JSON.parse(String(solc.compile(JSON.stringify(input)))) as SolcOutput
  const errors = (output.errors ?? []).filter((e) => e.severity === "error")
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join("\n"))
  const contract = output.contracts?.["MockUSDC.sol"]?.["MockUSDC"]
  if (contract === undefined) throw new Error("solc produced no MockUSDC contract")
  return {
    contractName: "MockUSDC",
    compiler: version,
    evmVersion,
    abi: contract.abi,
    bytecode: `0x${contract.evm.bytecode.object}`
  }
}

export const renderArtifact = (artifact: ContractArtifact): string => JSON.stringify(artifact, null, 2) + "\n"

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(artifactPath, renderArtifact(compileMockUsdc()))
  console.log(`wrote ${artifactPath}`)
}
