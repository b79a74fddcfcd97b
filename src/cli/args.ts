// Shared argument parsing for CLI commands: node's parseArgs, and on a usage error the reason
// plus the command's usage on stderr (the caller exits 2).
import { parseArgs, type ParseArgsConfig } from "node:util"

export const parseOrUsage = <const O extends NonNullable<ParseArgsConfig["options"]>>(
  args: ReadonlyArray<string>,
  options: O,
  usage: string,
  allowPositionals = false
) => {
  try {
    return parseArgs({ args: args as Array<string>, options, allowPositionals, strict: true })
  } catch (e) {
    console.error(`${(e as Error).message}\n${usage}`)
    return undefined
  }
}
