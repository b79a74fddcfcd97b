// The social network's migrations (tables `social_*`; docs/layout.md). Ids are one sequence
// across all services: a new migration takes the next free number, whichever service it belongs to.
// Its sessions and sign-in challenges were made by platform migrations 0007 and 0014, which
// made other services' tables too.
import type { Migrations } from "../../platform/database/Migrations.ts"
import m0013 from "./0013_social_accounts.ts"
import m0015 from "./0015_social_content.ts"
import m0022 from "./0022_social_stamping_succession.ts"
import m0023 from "./0023_member_signed_stamps.ts"
import m0024 from "./0024_social_owed_stamps.ts"
import m0035 from "./0035_social_blocked_cids.ts"
import m0040 from "./0040_social_spec_tags.ts"
import m0041 from "./0041_social_live_streams.ts"

export const migrations: Migrations = {
  "0013_social_accounts": m0013,
  "0015_social_content": m0015,
  "0022_social_stamping_succession": m0022,
  "0023_member_signed_stamps": m0023,
  "0024_social_owed_stamps": m0024,
  "0035_social_blocked_cids": m0035,
  "0040_social_spec_tags": m0040,
  "0041_social_live_streams": m0041
}
