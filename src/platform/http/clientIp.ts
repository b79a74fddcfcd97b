// Which address a request came from. Behind proxies we run, X-Forwarded-For is a list each hop
// appends to, so only its right end is trustworthy: walking from the right, every entry a trusted
// proxy added is skipped and the first one that is not a trusted proxy is the client (nginx's
// real_ip_recursive). The left end is whatever the client wrote; taking it would let a client pick
// its own IP for allowlists and rate limits. Pure: the edge hands in the socket address and header.
import { isIP } from "node:net"

/** One trusted proxy: an address family and a prefix of its bits (a single address is a /32 or /128). */
export interface ProxyRange {
  readonly family: 4 | 6
  readonly bits: bigint
  readonly prefix: number
}

/** "::ffff:127.0.0.1" and "127.0.0.1" are the same client. */
export const normalizeIp = (ip: string): string => (ip.toLowerCase().startsWith("::ffff:") && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip)

const v4Bits = (ip: string): bigint => ip.split(".").reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n)

const v6Bits = (ip: string): bigint => {
  // A trailing dotted quad (::ffff:1.2.3.4) is two groups.
  const dotted = ip.lastIndexOf(":")
  const tail = ip.slice(dotted + 1)
  const text = tail.includes(".")
    ? `${ip.slice(0, dotted + 1)}${(Number(v4Bits(tail) >> 16n)).toString(16)}:${(Number(v4Bits(tail) & 0xffffn)).toString(16)}`
    : ip
  const [head, rest] = text.split("::") as [string, string | undefined]
  const left = head === "" ? [] : head.split(":")
  const right = rest === undefined || rest === "" ? [] : rest.split(":")
  const groups = rest === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right]
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n)
}

/** The address as bits of its family, an IPv4-mapped IPv6 address as IPv4; undefined if not an IP. */
const addressBits = (raw: string): { family: 4 | 6; bits: bigint } | undefined => {
  const ip = normalizeIp(raw.trim().replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, ""))
  const family = isIP(ip)
  if (family === 4) return { family, bits: v4Bits(ip) }
  if (family === 6) return { family, bits: v6Bits(ip) }
  return undefined
}

/** `10.0.0.0/8`, `::1`, `fd00::/8`: a range, or an error message naming the bad entry. */
export const parseProxyRange = (entry: string): ProxyRange | string => {
  const [address = "", length, extra] = entry.trim().split("/")
  const parsed = addressBits(address)
  if (parsed === undefined || extra !== undefined) return `"${entry.trim().slice(0, 60)}" is not an IP address or CIDR range`
  const width = parsed.family === 4 ? 32 : 128
  const prefix = length === undefined ? width : /^\d{1,3}$/.test(length) ? Number(length) : -1
  if (prefix < 0 || prefix > width) return `"${entry.trim().slice(0, 60)}" has a prefix length outside 0..${width}`
  const shift = BigInt(width - prefix)
  return { family: parsed.family, bits: (parsed.bits >> shift) << shift, prefix }
}

/** Loopback, the default when SHARDLINE_TRUST_PROXY=true and no list is given. */
export const loopbackProxies = "127.0.0.0/8,::1"

/** A comma-separated list of ranges, or the first bad entry's message. */
export const parseTrustedProxies = (text: string): ReadonlyArray<ProxyRange> | string => {
  const out: Array<ProxyRange> = []
  for (const entry of text.split(",").filter((e) => e.trim() !== "")) {
    const range = parseProxyRange(entry)
    if (typeof range === "string") return range
    out.push(range)
  }
  return out
}

export const isTrustedProxy = (ip: string, proxies: ReadonlyArray<ProxyRange>): boolean => {
  const parsed = addressBits(ip)
  if (parsed === undefined) return false
  return proxies.some((p) => {
    if (p.family !== parsed.family) return false
    const shift = BigInt((p.family === 4 ? 32 : 128) - p.prefix)
    return (parsed.bits >> shift) << shift === p.bits
  })
}

/** Longest X-Forwarded-For list walked; a longer one is cut at its right end (the part proxies wrote). */
export const forwardedEntriesMax = 32

/**
 * The client: the socket's address unless it is a trusted proxy; then, from the right of
 * X-Forwarded-For, the first entry that is not a trusted proxy. If every entry is a trusted proxy
 * the left-most one is the client (all hops are ours). An entry that is not an IP stops the walk
 * (nothing to its left can be trusted) and the last trusted hop is the client.
 */
export const clientIpFrom = (socketIp: string, forwarded: string | undefined, proxies: ReadonlyArray<ProxyRange>): string => {
  let client = normalizeIp(socketIp)
  if (forwarded === undefined || !isTrustedProxy(client, proxies)) return client
  const entries = forwarded.split(",").slice(-forwardedEntriesMax)
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!.trim()
    if (addressBits(entry) === undefined) return client
    client = normalizeIp(entry.replace(/^\[(.*)\]$/, "$1"))
    if (!isTrustedProxy(client, proxies)) return client
  }
  return client
}
