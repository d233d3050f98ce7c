import ipaddr from 'ipaddr.js';

/**
 * Which IP addresses an outbound request (input image, webhook) may connect to.
 *
 * Public unicast only. The address is judged in its canonical parsed form, so odd spellings
 * (decimal, octal or hex IPv4, IPv4-mapped or -compatible IPv6) are judged as what they reach.
 */
export interface AddressPolicy {
  /** Admit loopback (127.0.0.0/8, ::1): IMAGEGEN_ALLOW_PRIVATE_URLS=1, for tests on one machine. */
  readonly allowPrivate?: boolean;
  /**
   * CIDR ranges admitted although not public, e.g. an operator's internal image host
   * (`10.1.2.0/24`). Tests use a single loopback alias to stand for "a public host".
   */
  readonly allowedRanges?: readonly string[];
}

/** Null when the policy admits the address; otherwise why not, e.g. `private`, `linkLocal`. */
export function refusalOf(address: string, policy: AddressPolicy = {}): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  let parsed = ipaddr.parse(address);
  // ::ffff:10.0.0.1 reaches 10.0.0.1; judge it as that. (::a.b.c.d, IPv4-compatible, is not in
  // 2000::/3 and is refused below.)
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  for (const cidr of policy.allowedRanges ?? []) {
    const [range, bits] = ipaddr.parseCIDR(cidr);
    if (range.kind() === parsed.kind() && parsed.match(range, bits)) return null;
  }
  const range = parsed.range();
  if (range === 'loopback' && policy.allowPrivate) return null;
  if (range !== 'unicast') return range;
  // ipaddr.js calls everything outside its special list "unicast"; for IPv6 only the global
  // unicast block 2000::/3 is actually routable on the internet.
  if (parsed.kind() === 'ipv6' && !parsed.match(ipaddr.parseCIDR('2000::/3'))) return 'not global unicast';
  return null;
}

/** Validates operator-supplied CIDRs once, at start-up, with a message naming the bad one. */
export function checkRanges(ranges: readonly string[]): void {
  for (const cidr of ranges) {
    try {
      ipaddr.parseCIDR(cidr);
    } catch {
      throw new Error(`allowed range ${JSON.stringify(cidr)} is not a CIDR (e.g. 10.1.2.0/24)`);
    }
  }
}
