// Where a callback may go. Without SHARDLINE_CALLBACK_ALLOW_HTTP the desk only calls public https
// endpoints: a callback URL is the partner's to choose, so a private, loopback, link-local or
// otherwise special address (literal, or what the host name resolves to at connect time) would
// let a partner make the desk call into its own network (SSRF). The check runs in the socket's
// own DNS lookup, so the address checked is the address connected to (no rebinding window).
import { lookup as dnsLookup, type LookupAddress } from "node:dns"
import { BlockList, isIP } from "node:net"

const special = new BlockList()
for (const [net, bits] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
  ["192.0.0.0", 24], ["192.0.2.0", 24], ["192.88.99.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["198.51.100.0", 24],
  ["203.0.113.0", 24], ["224.0.0.0", 4], ["240.0.0.0", 4]
] as const) special.addSubnet(net, bits, "ipv4")
for (const [net, bits] of [
  ["::", 128], ["::1", 128], ["64:ff9b::", 96], ["64:ff9b:1::", 48], ["100::", 64], ["2001::", 23], ["2001:db8::", 32],
  ["2002::", 16], ["fc00::", 7], ["fe80::", 10], ["ff00::", 8]
] as const) special.addSubnet(net, bits, "ipv6")

/** True for an address on the public internet (IPv4-mapped IPv6 judged as its IPv4). */
export const isPublicAddress = (address: string): boolean => {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped !== null) return isPublicAddress(mapped[1]!)
  const family = isIP(address)
  if (family === 0) return false
  return !special.check(address, family === 4 ? "ipv4" : "ipv6")
}

/** Why the desk will not call this URL, or undefined when it may (before any DNS lookup). */
export const targetRefusal = (url: URL, allowHttp: boolean): string | undefined => {
  if (url.protocol !== "https:" && !(allowHttp && url.protocol === "http:")) return "callback URLs must be https"
  if (allowHttp) return undefined
  const host = url.hostname.replace(/^\[|\]$/g, "")
  if (isIP(host) !== 0 && !isPublicAddress(host)) return `callback target ${host} is not a public address`
  if (host === "localhost" || host.endsWith(".localhost")) return "callback target localhost is not a public address"
  return undefined
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | Array<LookupAddress>, family?: number) => void

/** A socket `lookup` that refuses a host resolving to any non-public address (unless allowed). */
export const guardedLookup = (allowPrivate: boolean) =>
  (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    dnsLookup(hostname, { all: true }, (err, addresses) => {
      if (err !== null) return callback(err, [])
      const bad = allowPrivate ? undefined : addresses.find((a) => !isPublicAddress(a.address))
      if (bad !== undefined) {
        const refused: NodeJS.ErrnoException = new Error(`callback target ${hostname} resolves to ${bad.address}, not a public address`)
        refused.code = "ECALLBACKTARGET"
        return callback(refused, [])
      }
      if (options.all === true) return callback(null, addresses)
      const first = addresses[0]!
      return callback(null, first.address, first.family)
    })
  }
