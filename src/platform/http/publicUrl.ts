// Where a listener is reached from outside (QR codes and manifests carry it): the configured
// public URL, or the listener's own address.
import { Option } from "effect"

export const publicBaseUrl = (configured: Option.Option<string>, host: string, port: number): string =>
  Option.getOrElse(configured, () => `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`)

/** A listener's public base URL and its origin (scheme, host, port); `configured`: set by the operator, not derived. */
export const publicUrls = (configured: Option.Option<string>, host: string, port: number): { readonly base: string; readonly origin: string; readonly configured: boolean } => {
  const base = publicBaseUrl(configured, host, port)
  return { base, origin: new URL(base).origin, configured: Option.isSome(configured) }
}
