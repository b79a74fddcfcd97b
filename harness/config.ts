// A node's config for tests and benchmarks: SHARDLINE_* variables given as a map, defaults otherwise.
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { type NodeConfigShape, readNodeConfig } from "../src/config.ts"

/** The master key every test and bench node shares, so keys made by one open on another. */
export const testMasterKey = "11".repeat(32)

/** A data dir of this process's own, made on first use: the default `./.data` is the user's `npm
 * start` data, which no test may touch (SHARDLINE_FORBIDDEN_DATA_DIR refuses it under the suite). */
let ownDataDir: string | undefined
const processDataDir = () => (ownDataDir ??= mkdtempSync(join(tmpdir(), "sl-harness-")))

export const configFrom = (vars: Record<string, string>): NodeConfigShape =>
  Effect.runSync(readNodeConfig({ SHARDLINE_DATA_DIR: vars["SHARDLINE_DATA_DIR"] ?? processDataDir(), ...vars }))
