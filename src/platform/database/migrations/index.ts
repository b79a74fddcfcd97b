// The platform's own migrations, and the ones that must stay here: an applied migration is
// recorded by its id and name, so one that made tables for several services cannot be split
// without an existing database running it again (docs/layout.md, "Tables and migrations").
// - 0003, 0004: platform tables (rate-limit windows, ops reports, devnet payments).
// - 0006: the secret box's check (platform) with the exchange's key-epoch tables, in one migration.
// - 0007: desk members and keys with social sessions, in one migration.
// - 0014: link_tokens, shared by the desk's and social's link-token entities (platform/identity),
//   with desk wallet tables and social sign-in challenges, in one migration.
import type { Migrations } from "../Migrations.ts"
import m0003 from "./0003_platform.ts"
import m0004 from "./0004_devnet.ts"
import m0006 from "./0006_key_epochs.ts"
import m0007 from "./0007_desk_social_auth.ts"
import m0014 from "./0014_wallet_identity.ts"
import m0031 from "./0031_web_sessions.ts"
import m0042 from "./0042_node_listeners.ts"
import m0045 from "./0045_link_token_base_url.ts"

export const migrations: Migrations = {
  "0003_platform": m0003,
  "0004_devnet": m0004,
  "0006_key_epochs": m0006,
  "0007_desk_social_auth": m0007,
  "0014_wallet_identity": m0014,
  // Wallet sign-in sessions of every listener (platform/signin): one table, a service column.
  "0031_web_sessions": m0031,
  // Each running node's listeners and their public URLs (platform/http/NodeListeners.ts), read by the CLI.
  "0042_node_listeners": m0042,
  // The public base URL a wallet-link token was issued for (link_tokens.base_url).
  "0045_link_token_base_url": m0045
}
