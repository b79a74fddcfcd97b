// Heap kept per empty block by each devnet (`npm start` mines all four chains on a clock, so
// this is what an idle embedded node grows by per block, until history is bounded).
import { Either } from "effect"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { DevnetEngine } from "../../src/chain/evm/internal/devnetEngine.ts"
import { devnetDefaults } from "../../src/chain/ledger/devnet.ts"
import { DevnetChain } from "../../src/chain/ledger/internal/devnetChain.ts"
import { ledgerParams } from "../../src/chain/params.ts"

/** Blocks per measurement: enough that per-block bytes dwarf the heap's own noise. */
const blocks = 5_000
const burnScript = Uint8Array.from([0x6a]) // OP_RETURN: clock blocks burn their coinbase

setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void
const heapUsed = () => {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

export interface MemoryRow {
  readonly [key: string]: string | number
  readonly devnet: string
  readonly blocks: number
  readonly bytesPerBlock: number
  readonly mbPerDayAt1s: number
}

const row = (devnet: string, bytes: number): MemoryRow => ({
  devnet,
  blocks,
  bytesPerBlock: Math.round(bytes / blocks),
  mbPerDayAt1s: Math.round((bytes / blocks) * 86_400 / 1e6)
})

export const measureDevnetMemory = async (): Promise<MemoryRow[]> => {
  const chain = new DevnetChain({ params: ledgerParams, ...devnetDefaults })
  let before = heapUsed()
  for (let i = 0; i < blocks; i += 100) chain.mine(100, burnScript)
  const ledger = row("ledger (UtxoLedger devnet)", heapUsed() - before)

  const engine = await DevnetEngine.create({ chainId: 8453, prefund: [], genesisTimestamp: 1_735_689_600, blockTimeSeconds: 2 })
  before = heapUsed()
  for (let i = 0; i < blocks; i += 100) {
    const r = await engine.mine(100)
    if (Either.isLeft(r)) throw new Error(r.left.message)
  }
  const evm = row("one EVM chain (EvmLedger devnet)", heapUsed() - before)
  return [ledger, evm]
}
