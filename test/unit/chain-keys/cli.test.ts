// Spawns the real CLI: `address check` and `message verify` print exactly one JSON object.
import { Either } from "effect"
import { execFile } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { signingKeyFromSeed } from "../../../src/chain/keys.ts"
import { signMessage } from "../../../src/chain/message.ts"
import { cli } from "../../support/cli.ts"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..")
const key = signingKeyFromSeed(new Uint8Array(32).fill(5))
if (Either.isLeft(key)) throw new Error(key.left.message)
const { address, privateKey } = key.right
const signed = signMessage("link me", privateKey)
if (Either.isLeft(signed)) throw new Error(signed.left.message)
const signature = signed.right

const json = (stdout: string): unknown => {
  const lines = stdout.trim().split("\n")
  expect(lines).toHaveLength(1)
  return JSON.parse(lines[0]!)
}

describe("CLI address check / message verify", () => {
  it("address check --json", async () => {
    const [ok, bech, typo, usage] = await Promise.all([
      cli(["address", "check", address, "--json"], {}),
      cli(["address", "check", "tok1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", "--json"], {}),
      cli(["address", "check", address.slice(0, -1) + (address.endsWith("a") ? "b" : "a"), "--json"], {}),
      cli(["address", "check", "--json"], {})
    ])
    expect(ok.code).toBe(0)
    expect(json(ok.stdout)).toEqual({ valid: true, type: "p2pkh" })
    expect(bech.code).toBe(1)
    expect(json(bech.stdout)).toEqual({ valid: false, error: expect.stringMatching(/bech32.*legacy address starting with T/) })
    expect(typo.code).toBe(1)
    expect(json(typo.stdout)).toEqual({ valid: false, error: expect.stringMatching(/checksum/) })
    expect(usage.code).toBe(2)
    expect(usage.stdout).toBe("")
  })

  it("message verify --json", async () => {
    const [ok, tampered, garbage] = await Promise.all([
      cli(["message", "verify", "--address", address, "--signature", signature, "--message", "link me", "--json"], {}),
      cli(["message", "verify", "--address", address, "--signature", signature, "--message", "link me!", "--json"], {}),
      cli(["message", "verify", "--address", address, "--signature", "%%%", "--message", "link me", "--json"], {})
    ])
    expect(ok.code).toBe(0)
    expect(json(ok.stdout)).toEqual({ valid: true })
    expect(tampered.code).toBe(1)
    expect(json(tampered.stdout)).toEqual({ valid: false, reason: expect.stringMatching(/does not match/) })
    expect(garbage.code).toBe(1)
    expect(json(garbage.stdout)).toEqual({ valid: false, reason: expect.stringMatching(/base64/) })
  })

  it("works through `npm run -s cli --` with a clean stdout", async () => {
    const out = await new Promise<string>((resolve, reject) =>
      execFile("npm", ["run", "-s", "cli", "--", "address", "check", address, "--json"], { cwd: root }, (error, stdout) =>
        error ? reject(error) : resolve(stdout.toString())
      )
    )
    expect(json(out)).toEqual({ valid: true, type: "p2pkh" })
  })
})
