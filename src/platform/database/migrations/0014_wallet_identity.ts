import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

// Wallet identity (issue 13): single-use link tokens and sign-in challenges, each owned by its
// entity (DeskLinkToken / SocialLinkToken, SignInChallenge); a desk member's linked wallet and
// what its LinkedWallet entity watches and samples; the payout addresses linking fills.
// Secrets (link tokens, one-time sign-in tokens, the browser's poll secret) are stored only as
// their SHA-256. Amounts are base units (NUMERIC(40,0), never a float).
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Filled by wallet linking (spec: "fills the member's token and USDC payout addresses"); the
  // permanent token-swap inbox is the desk's cash-out work to fill, read by rewards matching.
  yield* sql`ALTER TABLE desk_members
    ADD COLUMN token_payout_address TEXT,
    ADD COLUMN usdc_payout_address TEXT,
    ADD COLUMN base_payout_address TEXT,
    ADD COLUMN token_inbox_address TEXT`
  yield* sql`CREATE TABLE link_tokens (
    token_hash TEXT PRIMARY KEY CHECK (token_hash ~ '^[0-9a-f]{64}$'),
    service TEXT NOT NULL CHECK (service IN ('desk', 'social')),
    subject TEXT NOT NULL,
    challenge_id TEXT NOT NULL UNIQUE,
    allow_rebind BOOLEAN NOT NULL DEFAULT false,
    issued_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    failures INTEGER NOT NULL DEFAULT 0 CHECK (failures >= 0),
    status TEXT NOT NULL DEFAULT 'issued' CHECK (status IN ('issued', 'used', 'expired', 'spent')),
    closed_at TIMESTAMPTZ
  )`
  yield* sql`CREATE TABLE desk_wallets (
    member_id UUID PRIMARY KEY REFERENCES desk_members(id),
    signing_address TEXT NOT NULL UNIQUE,
    xpub TEXT NOT NULL UNIQUE,
    evm_address TEXT NOT NULL,
    base_address TEXT NOT NULL,
    wallet TEXT NOT NULL,
    linked_at TIMESTAMPTZ NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE TABLE linked_wallet_addresses (
    member_id UUID NOT NULL REFERENCES desk_members(id),
    branch SMALLINT NOT NULL CHECK (branch IN (0, 1)),
    idx INTEGER NOT NULL CHECK (idx >= 0),
    address TEXT NOT NULL,
    used BOOLEAN NOT NULL DEFAULT false,
    PRIMARY KEY (member_id, branch, idx)
  )`
  yield* sql`CREATE INDEX linked_wallet_addresses_address ON linked_wallet_addresses (address)`
  // One row per hourly slot: a balance, or NULL for a slot the cluster missed (never invented).
  yield* sql`CREATE TABLE linked_wallet_samples (
    member_id UUID NOT NULL REFERENCES desk_members(id),
    slot_at TIMESTAMPTZ NOT NULL,
    balance_base NUMERIC(40, 0) CHECK (balance_base >= 0),
    taken_at TIMESTAMPTZ,
    PRIMARY KEY (member_id, slot_at),
    CHECK ((balance_base IS NULL) = (taken_at IS NULL))
  )`
  yield* sql`CREATE TABLE social_signin_challenges (
    id TEXT PRIMARY KEY,
    nonce TEXT NOT NULL,
    origin TEXT NOT NULL,
    browser_hash TEXT NOT NULL CHECK (browser_hash ~ '^[0-9a-f]{64}$'),
    issued_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'signed', 'released', 'exchanged', 'expired')),
    address TEXT,
    token_hash TEXT UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
    closed_at TIMESTAMPTZ
  )`
  // A wallet's xpub links to one social account at most (409 otherwise).
  yield* sql`CREATE UNIQUE INDEX social_accounts_xpub ON social_accounts (xpub) WHERE xpub IS NOT NULL`
})
