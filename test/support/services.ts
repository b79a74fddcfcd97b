// Desk keys and social sessions made in a test database the way the CLI and the sign-in flow make
// them (same store functions, same tables, same secret box).
import { runWithDatabase } from "../../harness/withDatabase.ts"
import { createMemberWithKey, type NewDeskKey, revokeKey } from "../../src/desk/keys/DeskKeyStore.ts"
import { mintSession, revokeSession } from "../../src/platform/signin/sessionStore.ts"
import { createAccount } from "../../src/social/accounts/Accounts.ts"

const run = runWithDatabase
/** Runs `effect` against the test database with the app's own connection (migrated) and secret box. */
export const runWithDb = runWithDatabase

export const createDeskKey = (databaseUrl: string, options: NewDeskKey) => runWithDb(databaseUrl, createMemberWithKey(options))
export const revokeDeskKey = (databaseUrl: string, apiKey: string) => runWithDb(databaseUrl, revokeKey(apiKey))

/** What wallet-exchange will do after a signed sign-in; a negative ttl makes an expired session. */
export const createSession = (databaseUrl: string, address: string, ttlMs?: number) => run(databaseUrl, mintSession("social", address, ttlMs))
export const revokeSocialSession = (databaseUrl: string, token: string) => run(databaseUrl, revokeSession(token))

/** What `social account create` makes: a devnet account with a sealed seed and the starting balance. */
export const createSocialAccount = (databaseUrl: string, handle?: string) => run(databaseUrl, createAccount(handle))
