// The V8 flags every Shardline node runs with: `npm start` and `npm run cluster` (package.json),
// the Dockerfile, the nodes `npm run cluster` spawns, SHARDLINE_PROCESSES' workers (node:cluster
// forks them with their primary's flags), and the harness that starts nodes for tests and
// benchmarks (harness/nodeProcess.ts), so a benchmark measures the node as a user runs it.
// test/unit/cluster/nodeFlags.test.ts checks that package.json and the Dockerfile carry them.
//
// --max-semi-space-size=64 (MB; V8's default tops out at 16): the young generation a scavenge
// copies out of. A node taking orders allocates fast (a request's strings, closures, Effect's
// fibers and exits), and with the default semi-space each scavenge still found much of a batch's
// garbage alive, copying and promoting it. In the orders benchmark (rest+cancel, 64 clients,
// session 27: docs/operations.md) garbage collection fell from 17–20 % to 14–16 % of the node's
// on-CPU samples and node CPU per order from 531–582 µs to 480–549 µs over four alternated
// pairs. The cost is memory: the young generation may grow to about three times this per process.
export const nodeFlags: ReadonlyArray<string> = ["--max-semi-space-size=64"]
