// Starting several throwaway processes together (anvil, litecoind) without leaking any.
export interface Stoppable {
  readonly stop: () => Promise<void>
}

/**
 * Starts every process; if any start fails, stops the ones that did start, then rethrows the
 * first failure. (A bare Promise.all would reject before the others resolved and leave them running.)
 */
export const startAll = async <T extends ReadonlyArray<Promise<Stoppable>>>(
  starts: readonly [...T]
): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> => {
  const settled = await Promise.allSettled(starts)
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected")
  if (failed === undefined) return settled.map((s) => (s as PromiseFulfilledResult<Stoppable>).value) as never
  await Promise.all(settled.map((s) => (s.status === "fulfilled" ? s.value.stop() : undefined)))
  throw failed.reason
}
