// The embedded database's superuser password, shared by both engines: 32 random bytes (hex) made
// on first use, kept in a 0600 file in the data dir. The local postgres stores it (SCRAM) in its
// cluster; the PGlite child reads the file and asks every connection for it (mux.ts).
import { randomBytes } from "node:crypto"
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"

/** The superuser's password, 0600, readable by the app's user only. */
export const PASSWORD_FILE = "embedded-postgres.password"

export const passwordFile = (dataDir: string): string => join(dataDir, PASSWORD_FILE)

/** Reads the password file (its mode made 0600 again), or makes it; `made` says which. */
export const readOrMakePassword = (dataDir: string): { readonly password: string; readonly made: boolean } => {
  const file = passwordFile(dataDir)
  if (existsSync(file)) {
    chmodSync(file, 0o600)
    return { password: readPassword(file), made: false }
  }
  const password = randomBytes(32).toString("hex")
  writeFileSync(file, password + "\n", { mode: 0o600, flag: "wx" })
  return { password, made: true }
}

/** The password in a file made by readOrMakePassword; an empty one is refused. */
export const readPassword = (file: string): string => {
  const password = readFileSync(file, "utf8").trim()
  if (password === "") throw new Error(`${file} is empty: remove it and start again to make a new password`)
  return password
}
