// The committed MockUSDC.json must be exactly what solc-js makes of MockUSDC.sol today.
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { artifactPath, compileMockUsdc, renderArtifact } from "../../../src/chain/evm/contracts/compile.ts"
import { mockUsdcAbi, mockUsdcBytecode } from "../../../src/chain/evm/MockUsdc.ts"

describe("MockUSDC artifact", () => {
  it("recompiles to the committed artifact byte for byte", () => {
    const fresh = compileMockUsdc()
    expect(renderArtifact(fresh)).toBe(readFileSync(artifactPath, "utf8"))
    expect(fresh.bytecode).toBe(mockUsdcBytecode)
  }, 30_000)

  it("has the USDC-style surface the ledger and the dev helpers use", () => {
    const names = mockUsdcAbi.flatMap((item) => ("name" in item && item.name !== undefined ? [`${item.type}:${item.name}`] : []))
    for (const n of ["function:decimals", "function:mint", "function:transfer", "function:transferFrom", "function:approve", "event:Transfer", "error:InsufficientBalance"]) {
      expect(names).toContain(n)
    }
  })
})
