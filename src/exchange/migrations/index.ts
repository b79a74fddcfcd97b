// The exchange's migrations. Ids are one sequence across all services (docs/layout.md): a new
// migration takes the next free number, whichever service it belongs to.
// 0008 and 0010 also made three tables the platform now reads and writes (system_wallets,
// demo_wallets, fee_sponsor_txs): they were made here before the split and stay, since an
// applied migration cannot be split (see ../../platform/database/migrations/index.ts).
import type { Migrations } from "../../platform/database/Migrations.ts"
import m0001 from "./0001_accounts.ts"
import m0002 from "./0002_authorizations.ts"
import m0005 from "./0005_api_key_revocations.ts"
import m0008 from "./0008_exchange_trading.ts"
import m0010 from "./0010_settlement.ts"
import m0011 from "./0011_settlement_legs_from_height.ts"
import m0012 from "./0012_settlement_txid_unique.ts"
import m0016 from "./0016_market_data.ts"
import m0037 from "./0037_key_destroyed_at.ts"
import m0043 from "./0043_grant_leg_totals.ts"
import m0046 from "./0046_orders_client_key.ts"
import m0048 from "./0048_exchange_market_tips.ts"

export const migrations: Migrations = {
  "0001_accounts": m0001,
  "0002_authorizations": m0002,
  "0005_api_key_revocations": m0005,
  "0008_exchange_trading": m0008,
  "0010_settlement": m0010,
  "0011_settlement_legs_from_height": m0011,
  "0012_settlement_txid_unique": m0012,
  "0016_market_data": m0016,
  "0037_key_destroyed_at": m0037,
  "0043_grant_leg_totals": m0043,
  // orders.client_key: the place idempotency key probed by one index, whatever the statistics.
  "0046_orders_client_key": m0046,
  // exchange_market_tips: confirmed legs' confirmations counted from their market's tip, not rewritten every block.
  "0048_exchange_market_tips": m0048
}
