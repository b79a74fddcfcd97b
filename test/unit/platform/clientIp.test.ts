// The client address behind proxies (src/platform/http/clientIp.ts): the right-most
// X-Forwarded-For entry that is not a trusted proxy, as nginx's real_ip_recursive takes it.
import { describe, expect, it } from "vitest"
import { clientIpFrom, isTrustedProxy, loopbackProxies, parseProxyRange, parseTrustedProxies, type ProxyRange } from "../../../src/platform/http/clientIp.ts"

const ranges = (text: string): ReadonlyArray<ProxyRange> => {
  const parsed = parseTrustedProxies(text)
  if (typeof parsed === "string") throw new Error(parsed)
  return parsed
}
const loopback = ranges(loopbackProxies)

describe("clientIpFrom", () => {
  it("takes the right-most entry the trusted proxy saw, not the client's own first entry", () => {
    expect(clientIpFrom("127.0.0.1", "10.9.9.9, 203.0.113.7", loopback)).toBe("203.0.113.7")
    expect(clientIpFrom("::ffff:127.0.0.1", "203.0.113.7", loopback)).toBe("203.0.113.7")
  })

  it("walks past every trusted hop (addresses and CIDRs, IPv4 and IPv6)", () => {
    const proxies = ranges("127.0.0.1, 10.0.0.0/8, fd00::/8")
    expect(clientIpFrom("127.0.0.1", "1.2.3.4, 198.51.100.9, 10.1.2.3, fd12::1", proxies)).toBe("198.51.100.9")
    expect(clientIpFrom("10.20.30.40", "2001:db8::5, fd00::2", proxies)).toBe("2001:db8::5")
    expect(clientIpFrom("fd00::9", "[2001:db8::7]", proxies)).toBe("2001:db8::7")
  })

  it("ignores the header when the socket is not a trusted proxy", () => {
    expect(clientIpFrom("198.51.100.1", "203.0.113.7", loopback)).toBe("198.51.100.1")
    expect(clientIpFrom("::ffff:198.51.100.1", "127.0.0.1", loopback)).toBe("198.51.100.1")
  })

  it("stops at an entry that is not an address: the last trusted hop is the client", () => {
    expect(clientIpFrom("127.0.0.1", "203.0.113.7, junk", loopback)).toBe("127.0.0.1")
    expect(clientIpFrom("127.0.0.1", "", loopback)).toBe("127.0.0.1")
    expect(clientIpFrom("127.0.0.1", undefined, loopback)).toBe("127.0.0.1")
  })

  it("takes the left-most entry when every hop is trusted", () => {
    expect(clientIpFrom("127.0.0.1", "127.0.0.5, ::1", loopback)).toBe("127.0.0.5")
  })

  it("reads only the right end of a very long list", () => {
    const list = [...Array<string>(10_000).fill("127.0.0.1"), "198.51.100.3"].join(",")
    expect(clientIpFrom("127.0.0.1", list, loopback)).toBe("198.51.100.3")
  })
})

describe("trusted proxy ranges", () => {
  it("matches addresses inside a prefix and nothing outside it", () => {
    const proxies = ranges("192.168.0.0/16,2001:db8:aa::/48,::1")
    expect(isTrustedProxy("192.168.200.1", proxies)).toBe(true)
    expect(isTrustedProxy("192.169.0.1", proxies)).toBe(false)
    expect(isTrustedProxy("2001:db8:aa:ffff::1", proxies)).toBe(true)
    expect(isTrustedProxy("2001:db8:ab::1", proxies)).toBe(false)
    expect(isTrustedProxy("::1", proxies)).toBe(true)
    expect(isTrustedProxy("::ffff:192.168.1.1", proxies)).toBe(true)
    expect(isTrustedProxy("not-an-ip", proxies)).toBe(false)
    expect(isTrustedProxy("1.2.3.4", ranges("0.0.0.0/0"))).toBe(true)
  })

  it("refuses entries that are not addresses or have a bad prefix", () => {
    expect(parseProxyRange("10.0.0.0/33")).toMatch(/prefix length outside 0..32/)
    expect(parseProxyRange("::/129")).toMatch(/outside 0..128/)
    expect(parseProxyRange("example.com")).toMatch(/not an IP address/)
    expect(parseProxyRange("10.0.0.0/8/1")).toMatch(/not an IP address/)
    expect(parseTrustedProxies("127.0.0.1, nope")).toMatch(/"nope"/)
  })
})
