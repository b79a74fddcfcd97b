// `npm run -s cli -- <command> ...`: one entry point; each command lives in its own module.
// A command module exports `run(args): Promise<number>` returning the process exit code.
const commands: Record<string, () => Promise<{ run: (args: ReadonlyArray<string>) => Promise<number> }>> = {
  keys: () => import("./keys.ts"),
  authorizations: () => import("./authorizations.ts"),
  ops: () => import("./ops.ts"),
  address: () => import("./address.ts"),
  message: () => import("./message.ts"),
  devnet: () => import("./devnet.ts"),
  desk: () => import("./desk.ts"),
  markets: () => import("./markets.ts"),
  demo: () => import("./demo.ts"),
  social: () => import("./social.ts")
}

const [name, ...rest] = process.argv.slice(2)
const load = name ? commands[name] : undefined
if (!load) {
  console.error(`usage: cli <${Object.keys(commands).join("|")}> ...`)
  process.exit(2)
}
const code = await (await load()).run(rest)
process.exit(code)
