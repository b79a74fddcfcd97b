// The token desk's migrations (tables `desk_*`; docs/layout.md). Ids are one sequence across
// all services: a new migration takes the next free number, whichever service it belongs to.
// The desk's first tables (members, API keys) and its linked-wallet tables were made by
// platform migrations 0007 and 0014, which made other services' tables too.
import type { Migrations } from "../../platform/database/Migrations.ts"
import m0017 from "./0017_desk_ledger.ts"
import m0018 from "./0018_desk_orders.ts"
import m0019 from "./0019_desk_cashout.ts"
import m0021 from "./0021_desk_refund_legs.ts"
import m0025 from "./0025_desk_order_idempotency.ts"
import m0033 from "./0033_desk_wallet_token_samples.ts"
import m0034 from "./0034_desk_attestation_requests.ts"
import m0036 from "./0036_desk_member_accounts.ts"
import m0044 from "./0044_desk_timer_firings.ts"
import m0047 from "./0047_desk_order_ticks_done.ts"

export const migrations: Migrations = {
  "0017_desk_ledger": m0017,
  "0018_desk_orders": m0018,
  "0019_desk_cashout": m0019,
  "0021_desk_refund_legs": m0021,
  "0025_desk_order_idempotency": m0025,
  "0033_desk_wallet_token_samples": m0033,
  "0034_desk_attestation_requests": m0034,
  "0036_desk_member_accounts": m0036,
  // desk_timer_firings, and link_tokens.base_url (the platform's table: see the migration).
  "0044_desk_timer_firings": m0044,
  // desk_orders.ticks_done_at: the re-arm sweep covers every chain not ended on purpose.
  "0047_desk_order_ticks_done": m0047
}
