// The result of a pure operation that can fail. Chain and crypto primitives return this instead of
// throwing across module boundaries. By default the error is a message meant for a person; a module
// whose callers must branch on the failure (the transaction builder: `BuildError`) passes tagged data.
export type Result<A, E = string> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly error: E }
