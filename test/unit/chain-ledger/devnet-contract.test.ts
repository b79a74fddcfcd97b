// The shared UtxoLedger contract on the in-process devnet.
import { makeUtxoDevnet } from "../../../src/chain/ledger/devnet.ts"
import { utxoLedgerContract } from "../../support/utxoLedgerContract.ts"

utxoLedgerContract("devnet", async () => {
  const devnet = makeUtxoDevnet()
  return { ledger: devnet.ledger, close: async () => devnet.close() }
})
