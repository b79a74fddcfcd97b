// The EvmLedger contract on the in-process devnet: three chains, in this process, no ports.
import { Effect, Exit, Redacted, Scope } from "effect"
import type { Hex } from "viem"
import { makeDevnet } from "../../../src/chain/evm/devnet.ts"
import { anvilDevKey } from "../../support/anvil.ts"
import { evmLedgerContract, testScanBlocksMax } from "../../support/evmLedgerContract.ts"

evmLedgerContract("devnet", async (chain, mining) => {
  const scope = Effect.runSync(Scope.make())
  const { ledger, node } = await Effect.runPromise(
    Scope.extend(
      makeDevnet({ chain, hotWalletKey: Redacted.make(anvilDevKey), mining: { mode: mining }, scanBlocksMax: testScanBlocksMax }),
      scope
    )
  )
  return {
    ledger,
    sendRaw: (raw: Hex) => Effect.runPromise(node.sendRawTransaction(raw)),
    fund: (address, wei) => Effect.runPromise(node.setBalance(address, wei)),
    nonce: (address) => Effect.runPromise(node.nextNonce(address)),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
})
