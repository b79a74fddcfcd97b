// The market assets on the ledger devnet: Omni managed properties created by the asset issuer
// (a system wallet, SystemWallet.ts), their supply granted to the devnet faucet, which pays
// every devnet asset (`devnet pay`, `demo trader`). Property ids are the ledger's own sequence
// (3, 4, 5, … in the main ecosystem; 3 is the faucet's DUSD), so a devnet that restarts from
// genesis gives the registered assets their ids back only if it issues the same properties in
// the same order: `reissue` does that from the registry (`exchange_assets`) and checks each id.
import { Data, Effect } from "effect"
import type { DevnetRefused } from "../../../schemas/devnet.ts"
import type { KeyWallet } from "../../chain/ledger/keyWallet.ts"
import type { UtxoLedgerShape } from "../../chain/ledger/UtxoLedger.ts"
import { ECOSYSTEM_MAIN } from "../../chain/omni/codec.ts"
import { FIRST_MAIN_PROPERTY_ID, FIRST_TEST_PROPERTY_ID, type OmniIndexer } from "../../chain/omni/indexer.ts"
import { devnetDollar } from "../../chain/ledger/devnetFaucet.ts"

import type { RegisteredAsset } from "../ledger/LedgerRegistry.ts"

export type { RegisteredAsset }

/** Whole tokens of a new market asset granted to the faucet. */
export const assetSupplyWhole = 1_000_000_000n
/** Satoshis the faucet gives the issuer when it holds less than `issuerFloorSats`. */
export const issuerFundingSats = 10n * 10n ** 8n
export const issuerFloorSats = 10n ** 7n
/** Placeholder properties `reissue` may create to skip ids issued but never registered. */
export const reissueGapMax = 100
/** The name of such a placeholder. */
export const placeholderName = "unused"

/** The registry and the devnet disagree on a property id: the node must not start. */
export class AssetsMismatch extends Data.TaggedError("AssetsMismatch")<{ readonly message: string }> {}

export interface IssuerDeps {
  readonly ledger: UtxoLedgerShape
  readonly faucet: KeyWallet
  readonly issuer: KeyWallet
  /** The node's Omni indexer, synced to the ledger's tip. */
  readonly synced: Effect.Effect<OmniIndexer, DevnetRefused>
}

/** The id the next main-ecosystem property will get on this ledger. */
export const nextMainId = (indexer: OmniIndexer): number =>
  indexer.properties().filter((p) => p.id < FIRST_TEST_PROPERTY_ID).reduce((next, p) => Math.max(next, p.id + 1), FIRST_MAIN_PROPERTY_ID)

const mineOne = (deps: IssuerDeps) => deps.ledger.mine(1, deps.faucet.address)

/** Tops the issuer up from the faucet (and mines) when it runs low on native coin. */
const fundIssuer = (deps: IssuerDeps) =>
  Effect.gen(function*() {
    if ((yield* deps.issuer.spendableSats) >= issuerFloorSats) return
    yield* deps.faucet.pay(deps.issuer.address, issuerFundingSats)
    yield* mineOne(deps)
  })

/** Creates a managed property named `name`, mines it in, and answers the id the ledger gave it. */
const create = (deps: IssuerDeps, name: string, subcategory = "Market asset") =>
  Effect.gen(function*() {
    yield* fundIssuer(deps)
    const txid = yield* deps.issuer.omni({
      type: "createManaged",
      ecosystem: ECOSYSTEM_MAIN,
      divisible: true,
      previousPropertyId: 0,
      category: "Exchange",
      subcategory: name === placeholderName ? "Placeholder" : subcategory,
      name,
      url: "",
      data: "devnet only"
    })
    yield* mineOne(deps)
    const property = (yield* deps.synced).properties().find((p) => p.txid === txid)
    if (property === undefined) return yield* new AssetsMismatch({ message: `the devnet did not create property ${name} (transaction ${txid})` })
    return { propertyId: property.id, txid }
  })

/**
 * Issues market asset `code` (8 decimals) and grants its supply to the faucet. With `expected`,
 * the id the ledger gives it must be that one (a re-issue after a devnet restart).
 */
export const issue = (deps: IssuerDeps, code: string, expected?: number, grantToFaucet = true) =>
  Effect.gen(function*() {
    const created = yield* create(deps, code, grantToFaucet ? "Market asset" : "Desk token")
    if (expected !== undefined && created.propertyId !== expected) {
      return yield* new AssetsMismatch({ message: `the devnet re-issued ${code} as property ${created.propertyId}, but the registry says ${expected}` })
    }
    if (!grantToFaucet) return created
    yield* deps.issuer.omni({ type: "grant", property: created.propertyId, amount: assetSupplyWhole * 10n ** 8n, memo: "devnet supply" }, deps.faucet.address)
    yield* mineOne(deps)
    return created
  })

/** The issuer grants `amount` (base units) of its managed `property` to `to` (topped up first); the txid. */
export const grant = (deps: IssuerDeps, property: number, amount: bigint, to: string, memo: string) =>
  Effect.gen(function*() {
    yield* fundIssuer(deps)
    return yield* deps.issuer.omni({ type: "grant", property, amount, memo }, to)
  })

/**
 * Re-issues every registered asset on a devnet that started from genesis, in property-id order,
 * so each gets its registered id back; ids issued before but never registered are skipped with
 * placeholders. DUSD (property 3) is the faucet's own. Fails with AssetsMismatch when the rows
 * cannot be matched (an id the devnet already gave to another property, a test-ecosystem id, a
 * gap over `reissueGapMax`); answers how many assets it issued.
 */
export const reissue = (
  issuers: IssuerDeps | ((issuer: string | undefined) => Effect.Effect<IssuerDeps, DevnetRefused>),
  registered: ReadonlyArray<RegisteredAsset>
) =>
  Effect.gen(function*() {
    const mismatch = (message: string) =>
      new AssetsMismatch({ message: `exchange_assets does not match the ledger devnet: ${message}` })
    let issued = 0
    for (const row of [...registered].sort((a, b) => a.propertyId - b.propertyId)) {
      // One issuer for every row, or each row's own (market assets and desk tokens).
      const deps = typeof issuers === "function" ? yield* issuers(row.issuer) : issuers
      const indexer = yield* deps.synced
      const next = nextMainId(indexer)
      if (row.propertyId < next) {
        const held = indexer.property(row.propertyId)
        const ours = row.code === devnetDollar.code ? held?.name === devnetDollar.name : held?.name === row.code
        if (!ours) return yield* mismatch(`${row.code} is property ${row.propertyId}, which on the devnet is ${held === undefined ? "nothing" : `"${held.name}"`}`)
        continue
      }
      if (row.propertyId >= FIRST_TEST_PROPERTY_ID) return yield* mismatch(`${row.code} is property ${row.propertyId}, a test-ecosystem id the devnet never issues`)
      if (row.propertyId - next > reissueGapMax) {
        return yield* mismatch(`${row.code} is property ${row.propertyId}, ${row.propertyId - next} ids past the devnet's next (${next}); more than ${reissueGapMax} to skip`)
      }
      for (let id = next; id < row.propertyId; id++) yield* create(deps, placeholderName)
      yield* issue(deps, row.code, row.propertyId, row.grantToFaucet ?? true)
      issued++
    }
    return issued
  })
