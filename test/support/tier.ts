// Two tiers of one suite (docs/testing.md): `npm test` runs the core, which must stay under 20
// minutes on a quiet machine with the CI chaos run; `npm run test:long` runs the long fault runs
// (each a minute or more of kill -9s, restarts and outages, on top of what the core already
// covers). CI runs both (.ci/run). A file of the long tier is named in vitest.config.ts; a file
// with variants runs in both tiers and gives each tier its own variants, so every variant runs in
// exactly one of them and none is skipped.

/** True in the long tier (`vitest.config.ts` sets SHARDLINE_TEST_TIER=long for its project). */
export const longTier = process.env.SHARDLINE_TEST_TIER === "long"

/** This tier's variants of a file that runs in both. */
export const variantsOfTier = <A>(variants: { readonly core: ReadonlyArray<A>; readonly long: ReadonlyArray<A> }): ReadonlyArray<A> =>
  longTier ? variants.long : variants.core
