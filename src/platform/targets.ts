// Where Lattice may send a request a user configured (webhook targets): public unicast addresses
// always; private networks only where the deployment names them (WEBHOOK_ALLOWED_TARGETS: CIDRs,
// addresses and host names); link-local and cloud metadata addresses never, whatever is named, also
// when they hide inside an IPv6 form that carries an IPv4 (NAT64, 6to4, Teredo, ::a.b.c.d).
import ipaddr from 'ipaddr.js';

type Ip = ipaddr.IPv4 | ipaddr.IPv6;

/** The deployment's allowance beyond public unicast, read once from its settings. */
export interface TargetAllowance {
  /** Networks whose addresses are allowed (an address is a /32 or /128). */
  networks: [Ip, number][];
  /** Host names whose resolved addresses are allowed (lower case); `.example.internal` allows every name under it. */
  hosts: string[];
}

export const NO_ALLOWANCE: TargetAllowance = { networks: [], hosts: [] };

/** What WEBHOOK_ALLOW_PRIVATE_TARGETS=true allows: loopback, the private and unique-local networks, CGNAT. */
export const PRIVATE_NETWORKS: readonly string[] = ['127.0.0.0/8', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '::1/128', 'fc00::/7'];

/**
 * Never a target: the instance metadata services of the clouds (they hand out credentials) and
 * the link-local ranges they live in, and what cannot be an HTTP server (unspecified, broadcast,
 * multicast).
 */
const NEVER: readonly [string, string][] = [
  ['169.254.0.0/16', 'a link-local address (cloud instance metadata lives there)'],
  ['fe80::/10', 'a link-local address'],
  ['fd00:ec2::254/128', 'the AWS instance metadata address'],
  ['100.100.100.200/32', 'the Alibaba Cloud instance metadata address'],
  ['192.0.0.192/32', 'the Oracle Cloud instance metadata address'],
  ['0.0.0.0/8', 'the unspecified address'],
  ['::/128', 'the unspecified address'],
  ['255.255.255.255/32', 'the broadcast address'],
  ['224.0.0.0/4', 'a multicast address'],
  ['ff00::/8', 'a multicast address'],
];
const NEVER_PARSED = NEVER.map(([cidr, why]) => [ipaddr.parseCIDR(cidr), why] as const);

const HOST_NAME = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * Reads a list of CIDRs (`10.0.0.0/8`, `fd12::/16`), addresses (`10.1.2.3`) and host names
 * (`hooks.internal`, `*.svc.cluster.local` for every name under it). Answers the allowance and a
 * line for each entry it could not read. An entry that reaches into a never-allowed range is read,
 * but those addresses stay refused.
 */
export function parseTargetAllowance(entries: readonly string[]): { allowance: TargetAllowance; problems: string[] } {
  const allowance: TargetAllowance = { networks: [], hosts: [] };
  const problems: string[] = [];
  for (const raw of entries.map((e) => e.trim())) {
    const entry = raw.toLowerCase();
    if (entry === '') continue;
    if (entry.includes('/')) {
      try {
        allowance.networks.push(ipaddr.parseCIDR(entry));
      } catch {
        problems.push(`${raw}: not a CIDR (address/prefix length)`);
      }
    } else if (ipaddr.isValid(entry)) {
      const ip = ipaddr.parse(entry);
      allowance.networks.push([ip, ip.kind() === 'ipv4' ? 32 : 128]);
    } else if (HOST_NAME.test(entry)) {
      allowance.hosts.push(entry.startsWith('*.') ? entry.slice(1) : entry);
    } else {
      problems.push(`${raw}: neither a CIDR, an address nor a host name`);
    }
  }
  return { allowance, problems };
}

/** The allowance plus the private networks, for WEBHOOK_ALLOW_PRIVATE_TARGETS=true. */
export function withPrivateNetworks(allowance: TargetAllowance): TargetAllowance {
  return { ...allowance, networks: [...allowance.networks, ...PRIVATE_NETWORKS.map((cidr) => ipaddr.parseCIDR(cidr))] };
}

/** Whether the allowance names this host (not an address): exactly, or under a `*.` entry. */
export function hostAllowed(allowance: TargetAllowance, host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return allowance.hosts.some((h) => (h.startsWith('.') ? name.endsWith(h) && name.length > h.length : name === h));
}

/** Whether the address lies in a network the allowance names. IPv4-mapped IPv6 is its IPv4. */
export function networkAllowed(allowance: TargetAllowance, ip: Ip): boolean {
  return allowance.networks.some(([network, bits]) => network.kind() === ip.kind() && ip.match(network, bits));
}

/** The IPv4 addresses an IPv6 address carries in the forms that route to them (mapped, compatible, NAT64, 6to4, Teredo). */
function embeddedIpv4(ip: ipaddr.IPv6): ipaddr.IPv4[] {
  const bytes = ip.toByteArray();
  const at = (offset: number, xor = 0) => new ipaddr.IPv4(bytes.slice(offset, offset + 4).map((b) => b ^ xor));
  const found: ipaddr.IPv4[] = [];
  if (ip.isIPv4MappedAddress() || ip.match(ipaddr.parseCIDR('64:ff9b::/96'))) found.push(at(12));
  // ::a.b.c.d (IPv4-compatible), but not :: and ::1, which carry no IPv4.
  if (ip.match(ipaddr.parseCIDR('::/96')) && !at(12).match(ipaddr.parseCIDR('0.0.0.0/8'))) found.push(at(12));
  if (ip.match(ipaddr.parseCIDR('64:ff9b:1::/48'))) found.push(at(12));
  if (ip.match(ipaddr.parseCIDR('2002::/16'))) found.push(at(2));
  if (ip.match(ipaddr.parseCIDR('2001::/32'))) found.push(at(4), at(12, 0xff));
  return found;
}

/** Why the address may never be a target, whatever the deployment allows; undefined when it may be. */
export function neverReason(ip: Ip): string | undefined {
  const candidates: Ip[] = [ip, ...(ip.kind() === 'ipv6' ? embeddedIpv4(ip as ipaddr.IPv6) : [])];
  for (const candidate of candidates) {
    for (const [[network, bits], why] of NEVER_PARSED) {
      if (network.kind() === candidate.kind() && candidate.match(network, bits)) return candidate === ip ? why : `${why}, inside ${ip.toString()}`;
    }
  }
  return undefined;
}
