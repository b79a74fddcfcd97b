// The layout rule (../shared/ARCHITECTURE.md, docs/layout.md): schemas <- src <- cluster, inside src
// crypto <- chain <- platform <- services, the three services apart, a node composing each service
// through its front door, no cycles. `npm run layout` checks it; `npm test` runs it before the tests.
// Outside a service, only its front door (src/<service>/<Service>.ts) may be imported; docs/layout.md
// lists every rule. Tables are the other half: SQL on a service's tables only inside that service is
// checked by test/unit/platform/tableOwnership.test.ts (dependency-cruiser sees imports, not SQL).
const services = "(exchange|desk|social)"
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: "no-cycles", severity: "error", comment: "An import cycle: split the shared part into its own module.", from: {}, to: { circular: true } },
    { name: "schemas-are-contracts", severity: "error", comment: "schemas/ holds wire contracts only; it imports no code of ours.",
      from: { path: "^schemas/" }, to: { path: "^(src|cluster|bench|test|harness)/" } },
    { name: "src-not-composition", severity: "error", comment: "src/ never imports how it is run or tested.",
      from: { path: "^src/" }, to: { path: "^(cluster|bench|test|harness)/" } },
    { name: "runtime-knows-no-service", severity: "error", comment: "src/platform and src/chain serve every service and import none.",
      from: { path: "^src/(platform|chain|crypto)/" }, to: { path: `^(src|schemas)/${services}/` } },
    { name: "chain-below-platform", severity: "error", comment: "src/chain is below src/platform.",
      from: { path: "^src/chain/" }, to: { path: "^src/platform/" } },
    { name: "crypto-is-a-leaf", severity: "error", comment: "src/crypto imports nothing of ours.",
      from: { path: "^src/crypto/" }, to: { path: "^(src|schemas|cluster)/", pathNot: "^src/crypto/" } },
    ...["exchange", "desk", "social"].map((s) => ({
      name: `services-apart-${s}`, severity: "error", comment: "The three services never import each other.",
      from: { path: `^(src|schemas)/${s}/` }, to: { path: `^(src|schemas)/(exchange|desk|social)/`, pathNot: `^(src|schemas)/${s}/` }
    })),
    ...[["exchange", "Exchange"], ["desk", "Desk"], ["social", "Social"]].map(([s, door]) => ({
      name: `service-internals-${s}`, severity: "error",
      comment: `Outside src/${s}/, the ${s} is reached through its front door (src/${s}/${door}.ts) only. ` +
        "Named exception: the CLI's commands (src/cli/).",
      from: { path: "^(src|cluster)/", pathNot: `^src/(${s}/|cli/)` },
      to: { path: `^src/${s}/`, pathNot: `^src/${s}/${door}\\.ts$` }
    })),
    { name: "services-import-no-devnet", severity: "error",
      comment: "Service code asks ports (CoinFaucets, TokenDecimals, DevnetBacking), never a devnet: a devnet is a layer given when a chain is one. " +
        "Still to move behind a port: the two demo worlds that seed a devnet (exchange DemoWorld.ts, desk DeskWorld.ts).",
      from: { path: `^src/${services}/`, pathNot: "^src/(exchange/markets/DemoWorld|desk/tokens/DeskWorld)\\.ts$" },
      to: { path: "^src/platform/devnet/", pathNot: "^src/platform/devnet/DevnetBacking\\.ts$" } },
    { name: "node-uses-front-doors", severity: "error",
      comment: "cluster/ composes each service through its front door (src/<service>/<Service>.ts, listed in src/services.ts), never its internals: a fourth service is one more front door.",
      from: { path: "^cluster/" }, to: { path: `^src/${services}/`, pathNot: "^src/(exchange/Exchange|desk/Desk|social/Social)\\.ts$" } },
    { name: "bench-not-tests", severity: "error", comment: "Benchmarks share code with tests through harness/, not test/.",
      from: { path: "^(bench|harness)/" }, to: { path: "^test/" } },
    { name: "no-unresolvable", severity: "error", from: {}, to: { couldNotResolve: true } }
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js", ".mjs", ".json"], exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"], mainFields: ["module", "main", "types"] }
  }
}
