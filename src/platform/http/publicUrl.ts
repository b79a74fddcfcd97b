// Where a listener is reached from outside (QR codes and manifests carry it): the configured
// public URL, or the listener's own address.
import { Option } from "effect"

export const publicBaseUrl = (configured: Option.Option<string>, host: string, port: number): string =>
  Option.getOrElse(configured, () => `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`)
