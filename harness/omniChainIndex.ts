// Our Omni indexer over a test's chain, keeping every Omni transaction it applied: the chain's own
// account of what was sent, for kill -9 tests to check nothing was paid twice.
import { Either } from "effect"
import type { BlockConsumer } from "../src/chain/ledger/follower.ts"
import { OmniIndexer, type OmniTxRecord } from "../src/chain/omni/indexer.ts"
import { ledgerParams } from "../src/chain/params.ts"

export const omniChainIndex = () => {
  const indexer = new OmniIndexer({ params: ledgerParams })
  const records: OmniTxRecord[] = []
  const consumer: BlockConsumer = {
    tip: () => indexer.tip(),
    apply: (b) => Either.map(indexer.apply(b), (rs) => { records.push(...rs); return rs }),
    rollback: () => indexer.rollback()
  }
  return { indexer, records, consumer }
}
