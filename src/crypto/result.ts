// The result of a pure operation that can fail with a message meant for a person. Chain and
// crypto primitives return this instead of throwing across module boundaries.
export type Result<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly error: string }
