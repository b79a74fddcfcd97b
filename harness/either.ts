// Tests and benchmarks take the value of a pure function that must succeed in that scenario.
import { Either } from "effect"

/** The right value; a left throws its message, failing the test or the benchmark loudly. */
export const unwrap = <A>(r: Either.Either<A, { readonly message: string }>): A =>
  Either.getOrThrowWith(r, (e) => new Error(e.message))
