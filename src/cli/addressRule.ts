// The CLI refuses a user address that fails the ledger address rule, with the rule's own message.
import { validateLedgerAddress } from "../chain/address.ts"

export const validateAddresses = (addresses: ReadonlyArray<string>): string | undefined => {
  for (const a of addresses) {
    const r = validateLedgerAddress(a)
    if (!r.valid) return `address ${a}: ${r.error}`
  }
  return undefined
}
