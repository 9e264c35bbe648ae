// The SSRF matrix for webhook targets, as data: special-purpose addresses with what the check must
// call them, IPv4 spellings, schemes, credentials, zone ids, names, public controls, and fast-check
// generators for the range sweeps. The expected ranges are written out here from the IANA
// special-purpose registries, not taken from ipaddr.js, so that a gap in the product shows.
// Used by test/reliability/ssrf.test.ts.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';

export const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
export const LOOPBACK = 'a loopback address';
const PRIVATE = 'a private address';
const LINK_LOCAL = 'a link-local address';
const UNIQUE_LOCAL = 'a unique-local address';
const CGNAT = 'a carrier-grade NAT address';
const UNSPECIFIED = 'the unspecified address';
const MULTICAST = 'a multicast address';
const BROADCAST = 'the broadcast address';
const RESERVED = 'a reserved address';
const NOT_GLOBAL = 'not a global unicast address';
const special = (range: string) => `a special-purpose address (${range})`;

/** The reason names the address as the URL parser wrote it, and, for IPv4-mapped, the IPv4 it was judged as. */
export const refusedAs = (address: string, what: string, judgedAs?: string) =>
  new RegExp(`refused: ${escape(address)}${judgedAs === undefined ? '' : ` \\(${escape(judgedAs)}\\)`} is ${escape(what)}`);

/** The WHATWG URL parser's spelling of an IPv6 address, as checkWebhookTarget and the socket see it. */
export const canonical6 = (address: string) => new URL(`http://[${address}]/`).hostname.slice(1, -1);

export interface Case {
  url: string;
  why: RegExp;
}

// ---- tables

export const V4_SPECIAL: Case[] = [
  ['127.0.0.1', LOOPBACK], ['127.255.255.254', LOOPBACK],
  ['10.0.0.0', PRIVATE], ['10.255.255.255', PRIVATE], ['172.16.0.0', PRIVATE], ['172.31.255.255', PRIVATE], ['192.168.0.0', PRIVATE], ['192.168.255.255', PRIVATE],
  ['169.254.0.1', LINK_LOCAL], ['169.254.169.254', LINK_LOCAL], ['169.254.255.255', LINK_LOCAL],
  ['100.64.0.0', CGNAT], ['100.100.100.200', CGNAT], ['100.127.255.255', CGNAT],
  ['0.0.0.0', UNSPECIFIED], ['0.255.255.255', UNSPECIFIED],
  ['255.255.255.255', BROADCAST],
  ['224.0.0.1', MULTICAST], ['239.255.255.250', MULTICAST],
  ['240.0.0.1', RESERVED], ['255.255.255.254', RESERVED],
  ['198.18.0.0', RESERVED], ['198.19.255.255', RESERVED], // benchmarking
  ['192.0.2.1', RESERVED], ['198.51.100.1', RESERVED], ['203.0.113.255', RESERVED], // documentation
  ['192.0.0.8', RESERVED], ['192.88.99.1', RESERVED], // IETF protocol assignments, 6to4 relay anycast
].map(([address, what]) => ({ url: `http://${address}/`, why: refusedAs(address!, what!) }));

export const V6_SPECIAL: Case[] = [
  ['::1', LOOPBACK], ['0:0:0:0:0:0:0:1', LOOPBACK], ['::', UNSPECIFIED],
  ['fe80::1', LINK_LOCAL], ['febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', LINK_LOCAL],
  ['fc00::1', UNIQUE_LOCAL], ['fdff:ffff::1', UNIQUE_LOCAL],
  ['ff02::1', MULTICAST], ['ff05::1:3', MULTICAST], ['ff0e::1', MULTICAST],
  ['2001:db8::1', RESERVED], ['3fff::1', RESERVED], // documentation
  ['fec0::1', special('deprecatedSiteLocal')], ['100::1', special('discard')], ['2001:2::1', special('benchmarking')], ['5f00::1', special('segmentRouting')],
  ['4000::1', NOT_GLOBAL], ['e000::1', NOT_GLOBAL],
  ['::127.0.0.1', NOT_GLOBAL], ['::10.0.0.1', NOT_GLOBAL], // IPv4-compatible
  ['::ffff:0:127.0.0.1', special('rfc6145')], // IPv4-translated
  ['64:ff9b::127.0.0.1', special('rfc6052')], ['64:ff9b::169.254.169.254', special('rfc6052')], ['64:ff9b::10.0.0.1', special('rfc6052')], ['64:ff9b:1::a00:1', special('rfc6052')],
  ['2002:7f00:1::1', special('6to4')], ['2002:a9fe:a9fe::', special('6to4')], ['2002:c0a8:101::1', special('6to4')],
  // Teredo: server 10.0.0.1, client ~127.0.0.1.
  ['2001:0:a00:1:8000:63bf:80ff:fffe', special('teredo')],
  // The decision: public IPv4 inside NAT64, 6to4 or Teredo is refused too.
  ['64:ff9b::8.8.8.8', special('rfc6052')], ['2002:808:808::1', special('6to4')], ['2001:0:4136:e378:8000:63bf:3fff:fdd2', special('teredo')],
].map(([address, what]) => ({ url: `http://[${address}]:8080/hook`, why: refusedAs(canonical6(address!), what!) }));

export const V4_MAPPED: Case[] = [
  ['::ffff:7f00:1', '127.0.0.1', LOOPBACK], ['::FFFF:7F00:1', '127.0.0.1', LOOPBACK], ['0:0:0:0:0:ffff:127.0.0.1', '127.0.0.1', LOOPBACK],
  ['::ffff:10.0.0.1', '10.0.0.1', PRIVATE], ['::ffff:100.64.0.1', '100.64.0.1', CGNAT], ['::ffff:0.0.0.0', '0.0.0.0', UNSPECIFIED],
  ['::ffff:255.255.255.255', '255.255.255.255', BROADCAST], ['::ffff:198.18.0.1', '198.18.0.1', RESERVED], ['::ffff:224.0.0.1', '224.0.0.1', MULTICAST],
].map(([address, v4, what]) => ({ url: `http://[${address}]/`, why: refusedAs(canonical6(address!), what!, v4) }));

/** Spellings the URL parser folds into one IPv4 address: [url, the address, what it is]. */
export const V4_SPELLINGS: Case[] = [
  ['http://2130706433/', '127.0.0.1', LOOPBACK], // decimal
  ['http://0177.0.0.1/', '127.0.0.1', LOOPBACK], // octal
  ['http://017700000001/', '127.0.0.1', LOOPBACK],
  ['http://00000177.0.0.01/', '127.0.0.1', LOOPBACK],
  ['http://0x7f.0.0.1/', '127.0.0.1', LOOPBACK], // hex
  ['http://0x7f000001/', '127.0.0.1', LOOPBACK],
  ['http://0X7F000001/', '127.0.0.1', LOOPBACK], // uppercase hex
  ['http://0x7F.0X0.0x0.0X1/', '127.0.0.1', LOOPBACK],
  ['http://0x0000007f.0.0.1/', '127.0.0.1', LOOPBACK],
  ['http://127.1/', '127.0.0.1', LOOPBACK], // short forms
  ['http://127.0.1/', '127.0.0.1', LOOPBACK],
  ['http://10.1/', '10.0.0.1', PRIVATE],
  ['http://192.168.1/', '192.168.0.1', PRIVATE],
  ['http://172.16.1/', '172.16.0.1', PRIVATE],
  ['http://0x7f.1/', '127.0.0.1', LOOPBACK], // mixed
  ['http://0177.0x0.1/', '127.0.0.1', LOOPBACK],
  ['http://127.0.0.1./', '127.0.0.1', LOOPBACK], // trailing dot
  ['http://127.1./', '127.0.0.1', LOOPBACK],
  ['http://0x7f.1./', '127.0.0.1', LOOPBACK],
  ['http://127.000.000.001/', '127.0.0.1', LOOPBACK],
  ['http://2130706433:8080/hook', '127.0.0.1', LOOPBACK], // with ports
  ['http://0x7f.1:80/', '127.0.0.1', LOOPBACK],
  ['https://0177.1:443/', '127.0.0.1', LOOPBACK],
  ['http://0x7f000001:6379/', '127.0.0.1', LOOPBACK],
  ['http://@0x7f.1/', '127.0.0.1', LOOPBACK], // empty userinfo: dropped by the parser
  ['http://0/', '0.0.0.0', UNSPECIFIED],
  ['http://0x0:8080/', '0.0.0.0', UNSPECIFIED],
  ['http://2852039166/', '169.254.169.254', LINK_LOCAL], // the cloud metadata address
  ['http://0xA9FEA9FE/', '169.254.169.254', LINK_LOCAL],
  ['http://0xa9.0xfe.0xa9.0xfe/', '169.254.169.254', LINK_LOCAL],
  ['http://0251.0376.0251.0376/', '169.254.169.254', LINK_LOCAL],
  ['http://169.254.43518/', '169.254.169.254', LINK_LOCAL],
  ['http://169.254.169.254./latest/meta-data/', '169.254.169.254', LINK_LOCAL],
  ['http://3232235521/', '192.168.0.1', PRIVATE],
  ['http://0xc0a80001/', '192.168.0.1', PRIVATE],
  ['http://0x64400001/', '100.64.0.1', CGNAT],
  ['http://4294967295/', '255.255.255.255', BROADCAST],
  ['http://0xffffffff/', '255.255.255.255', BROADCAST],
  ['http://0xe0000001/', '224.0.0.1', MULTICAST],
  ['http://4026531841/', '240.0.0.1', RESERVED],
  ['http://3323068417/', '198.18.0.1', RESERVED],
  // What the parser maps to ASCII, decodes or drops.
  ['http://１２７.０.０.１/', '127.0.0.1', LOOPBACK],
  ['http://127。0。0。1/', '127.0.0.1', LOOPBACK],
  ['http://%31%32%37.0.0.1/', '127.0.0.1', LOOPBACK],
  ['http://127.0.0.1\t/', '127.0.0.1', LOOPBACK],
  ['http:\\\\127.0.0.1\\hook', '127.0.0.1', LOOPBACK],
  ['HTTP://127.0.0.1/', '127.0.0.1', LOOPBACK],
  // Whatever comes after the authority, the host is what is checked.
  ['http://127.0.0.1\\@93.184.216.34/', '127.0.0.1', LOOPBACK],
  ['http://127.0.0.1#@93.184.216.34/', '127.0.0.1', LOOPBACK],
  ['http://127.0.0.1?@93.184.216.34/', '127.0.0.1', LOOPBACK],
].map(([url, address, what]) => ({ url: url!, why: refusedAs(address!, what!) }));

export const SCHEME_CREDENTIALS_ZONES: Case[] = [
  ...['file:///etc/passwd', 'FILE:///etc/passwd', 'file://localhost/etc/passwd', 'gopher://127.0.0.1:6379/_INFO', 'ftp://10.0.0.1/', 'data:text/plain,hello',
    'javascript:alert(1)', 'ws://127.0.0.1/', 'wss://93.184.216.34/', 'dict://127.0.0.1:11211/stats', 'ldap://127.0.0.1/', 'tftp://10.0.0.1/x',
    'blob:http://127.0.0.1/x', 'view-source:http://127.0.0.1/'].map((url) => ({ url, why: new RegExp(`the scheme ${escape(new URL(url).protocol)} is not http or https`) })),
  ...['http://user:pass@127.0.0.1/', 'http://admin@169.254.169.254/', 'http://:secret@93.184.216.34/', 'http://user:@93.184.216.34/', 'http://93.184.216.34@127.0.0.1/',
    'http://u%3Ap@93.184.216.34/', 'https://user:pw@[2606:4700:4700::1111]/'].map((url) => ({ url, why: /credentials in the URL/ })),
  // The URL standard has no zone ids: the parser refuses them, encoded or not.
  ...['http://[fe80::1%25eth0]/', 'http://[fe80::1%eth0]/', 'http://[fe80::1%251]/', 'http://[::1%25lo]/', 'http://[::ffff:127.0.0.1%25lo]/', 'http://127.0.0.1%25lo/'].map(
    (url) => ({ url, why: /not an absolute URL/ }),
  ),
];

/** Names under .test (RFC 6761: never in real DNS) with the answers a fake resolver gives: where they point is what is judged, every answer counts. */
export const FAKE_NAMES: (Case & { answers: [string, 4 | 6][] })[] = [
  { url: 'http://metadata.ssrf.test/computeMetadata/v1/', answers: [['169.254.169.254', 4]], why: refusedAs('169.254.169.254', LINK_LOCAL) },
  { url: 'http://alibaba-metadata.ssrf.test/', answers: [['100.100.100.200', 4]], why: refusedAs('100.100.100.200', CGNAT) },
  { url: 'http://mixed.ssrf.test/', answers: [['93.184.216.34', 4], ['10.0.0.1', 4]], why: refusedAs('10.0.0.1', PRIVATE) },
  { url: 'http://mixed6.ssrf.test/', answers: [['2606:4700:4700::1111', 6], ['fd00::1', 6]], why: refusedAs('fd00::1', UNIQUE_LOCAL) },
  { url: 'http://loopback6.ssrf.test/', answers: [['::1', 6]], why: refusedAs('::1', LOOPBACK) },
  { url: 'http://mapped.ssrf.test/', answers: [['::ffff:127.0.0.1', 6]], why: refusedAs('::ffff:127.0.0.1', LOOPBACK, '127.0.0.1') },
  { url: 'http://nat64.ssrf.test/', answers: [['64:ff9b::a9fe:a9fe', 6]], why: refusedAs('64:ff9b::a9fe:a9fe', special('rfc6052')) },
  { url: 'http://zone.ssrf.test/', answers: [['fe80::1%eth0', 6]], why: refusedAs('fe80::1%eth0', LINK_LOCAL) },
  { url: 'http://unspecified.ssrf.test/', answers: [['0.0.0.0', 4]], why: refusedAs('0.0.0.0', UNSPECIFIED) },
];
/** A name the fake resolver maps to a public address. */
export const PUBLIC_NAME = { name: 'public.ssrf.test', address: '93.184.216.34' };

const hostsFile = (() => {
  try {
    return readFileSync('/etc/hosts', 'utf8');
  } catch {
    return '';
  }
})();
/** Names that may resolve to loopback: the ones any Linux knows, RFC 6761 ones, and this machine's /etc/hosts loopback names. */
export const LOOPBACK_NAMES = [
  ...new Set([
    'localhost', 'LOCALHOST', 'LocalHost', 'localhost.', 'anything.localhost', 'ⓛⓞⓒⓐⓛⓗⓞⓢⓣ', 'ip6-localhost', 'ip6-loopback', 'localhost.localdomain',
    ...hostsFile.split('\n').flatMap((line) => {
      const [address, ...names] = line.replace(/#.*/, '').trim().split(/\s+/);
      return address !== undefined && (/^127\./.test(address) || address === '::1') ? names : [];
    }),
  ]),
];
export const isLoopback = (address: string) => /^127\./.test(address) || address === '::1' || /^::ffff:127\./i.test(address);

/** Public targets, including the nearest neighbours of refused ranges: accepted, as this address. */
export const PUBLIC: [string, string][] = [
  ['http://93.184.216.34/', '93.184.216.34'], ['https://[2606:4700:4700::1111]/', '2606:4700:4700::1111'], ['http://[2001:4860:4860::8888]/', '2001:4860:4860::8888'],
  ['http://1572395042/', '93.184.216.34'], ['http://0x5db8d822/', '93.184.216.34'], ['http://0135.0270.0330.042/', '93.184.216.34'], ['http://93.184.216.34./', '93.184.216.34'],
  ['http://9.255.255.255/', '9.255.255.255'], ['http://11.0.0.0/', '11.0.0.0'], ['http://100.63.255.255/', '100.63.255.255'], ['http://100.128.0.0/', '100.128.0.0'],
  ['http://126.255.255.255/', '126.255.255.255'], ['http://128.0.0.0/', '128.0.0.0'], ['http://169.253.255.255/', '169.253.255.255'], ['http://169.255.0.0/', '169.255.0.0'],
  ['http://172.15.255.255/', '172.15.255.255'], ['http://172.32.0.0/', '172.32.0.0'], ['http://192.167.255.255/', '192.167.255.255'], ['http://192.169.0.0/', '192.169.0.0'],
  ['http://198.17.255.255/', '198.17.255.255'], ['http://198.20.0.0/', '198.20.0.0'], ['http://223.255.255.255/', '223.255.255.255'], ['http://1.0.0.0/', '1.0.0.0'],
  ['http://[2001:200::1]/', '2001:200::1'], ['http://[2001:db9::1]/', '2001:db9::1'], ['http://[2003::1]/', '2003::1'], ['http://[3fff:1000::1]/', '3fff:1000::1'],
  ['http://public.ssrf.test/', '93.184.216.34'],
];

// ---- generators for the range sweeps

const toInt = (dotted: string) => dotted.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
const octets = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
const dotted = (n: number) => octets(n).join('.');
const hex16 = (n: number) => [(n >>> 16).toString(16), (n & 0xffff).toString(16)];

interface V4Range {
  base: number;
  size: number;
  what: string;
}
const v4Range = (cidr: string, what: string): V4Range => {
  const [address, length] = cidr.split('/');
  return { base: toInt(address!), size: 2 ** (32 - Number(length)), what };
};
/** Ordered: the first range that holds an address says what it is. */
const V4_RANGES = [
  v4Range('255.255.255.255/32', BROADCAST), v4Range('0.0.0.0/8', UNSPECIFIED), v4Range('10.0.0.0/8', PRIVATE), v4Range('100.64.0.0/10', CGNAT),
  v4Range('127.0.0.0/8', LOOPBACK), v4Range('169.254.0.0/16', LINK_LOCAL), v4Range('172.16.0.0/12', PRIVATE), v4Range('192.0.0.0/24', RESERVED),
  v4Range('192.0.2.0/24', RESERVED), v4Range('192.88.99.0/24', RESERVED), v4Range('192.168.0.0/16', PRIVATE), v4Range('198.18.0.0/15', RESERVED),
  v4Range('198.51.100.0/24', RESERVED), v4Range('203.0.113.0/24', RESERVED), v4Range('224.0.0.0/4', MULTICAST), v4Range('240.0.0.0/4', RESERVED),
];
/** Globally reachable special-purpose ranges the check also refuses (AS112, AMT): neither required nor public here. */
const V4_ALSO_REFUSED = [v4Range('192.31.196.0/24', ''), v4Range('192.52.193.0/24', ''), v4Range('192.175.48.0/24', '')];
const within = (n: number, range: V4Range) => n >= range.base && n < range.base + range.size;
const v4What = (n: number) => V4_RANGES.find((range) => within(n, range))?.what;

const specialV4 = fc.constantFrom(...V4_RANGES).chain((range) => fc.integer({ min: range.base, max: range.base + range.size - 1 }));
const publicV4 = fc.integer({ min: 0, max: 2 ** 32 - 1 }).filter((n) => v4What(n) === undefined && !V4_ALSO_REFUSED.some((range) => within(n, range)));

const SPELL: Record<string, (n: number) => string> = {
  dotted,
  decimal: (n) => String(n),
  hex: (n) => `0x${n.toString(16)}`,
  HEX: (n) => `0X${n.toString(16).toUpperCase()}`,
  octal: (n) => `0${n.toString(8)}`,
  'dotted octal': (n) => octets(n).map((o) => `0${o.toString(8)}`).join('.'),
  'dotted hex': (n) => octets(n).map((o) => `0x${o.toString(16)}`).join('.'),
  'three parts': (n) => `${n >>> 24}.${(n >>> 16) & 255}.${n & 0xffff}`,
  'two parts': (n) => `${n >>> 24}.${n & 0xffffff}`,
  'hex and decimal': (n) => `0x${(n >>> 24).toString(16)}.${n & 0xffffff}`,
  'octal, hex and decimal': (n) => `0${(n >>> 24).toString(8)}.0x${((n >>> 16) & 255).toString(16)}.${n & 0xffff}`,
  'trailing dot': (n) => `${dotted(n)}.`,
  'fullwidth digits': (n) => dotted(n).replace(/\d/g, (d) => String.fromCharCode(0xff10 + Number(d))),
};
const spelledUrl = (n: number) =>
  fc
    .tuple(fc.constantFrom('http', 'https', 'HTTP', 'hTtPs'), fc.constantFrom(...Object.values(SPELL)), fc.option(fc.integer({ min: 1, max: 65_535 })))
    .map(([scheme, spell, port]) => `${scheme}://${spell(n)}${port === null ? '' : `:${port}`}/hook`);
/** An address of a special IPv4 range in any spelling, scheme and port, and what the refusal must say. */
export const specialV4Spelled: fc.Arbitrary<Case> = specialV4.chain((n) => spelledUrl(n).map((url) => ({ url, why: refusedAs(dotted(n), v4What(n)!) })));
/** A public IPv4 in any spelling, scheme and port, and the address it must be accepted as. */
export const publicV4Spelled = publicV4.chain((n) => spelledUrl(n).map((url) => ({ url, address: dotted(n) })));

/** IPv4 inside IPv6: [the address, what it is] for an embedded IPv4 n. Mapped is judged as its IPv4. */
const WRAPPERS: Record<string, (n: number) => [string, RegExp | ((v4What: string) => RegExp)]> = {
  'IPv4-mapped, dotted': (n) => [`::ffff:${dotted(n)}`, (what) => refusedAs(canonical6(`::ffff:${dotted(n)}`), what, dotted(n))],
  'IPv4-mapped, hex': (n) => [`::ffff:${hex16(n).join(':')}`, (what) => refusedAs(canonical6(`::ffff:${dotted(n)}`), what, dotted(n))],
  'IPv4-compatible': (n) => [`::${dotted(n)}`, refusedAs(canonical6(`::${dotted(n)}`), n === 0 ? UNSPECIFIED : n === 1 ? LOOPBACK : NOT_GLOBAL)],
  'IPv4-translated': (n) => [`::ffff:0:${dotted(n)}`, refusedAs(canonical6(`::ffff:0:${dotted(n)}`), special('rfc6145'))],
  'NAT64 64:ff9b::/96': (n) => [`64:ff9b::${dotted(n)}`, refusedAs(canonical6(`64:ff9b::${dotted(n)}`), special('rfc6052'))],
  'NAT64 local-use 64:ff9b:1::/48': (n) => [`64:ff9b:1::${dotted(n)}`, refusedAs(canonical6(`64:ff9b:1::${dotted(n)}`), special('rfc6052'))],
  '6to4 2002::/16': (n) => [`2002:${hex16(n).join(':')}::1`, refusedAs(canonical6(`2002:${hex16(n).join(':')}::1`), special('6to4'))],
  'Teredo 2001::/32': (n) => {
    const client = hex16(~n >>> 0).join(':');
    const address = `2001:0:${hex16(n).join(':')}:8000:63bf:${client}`;
    return [address, refusedAs(canonical6(address), special('teredo'))];
  },
};
const wrapped = (v4: fc.Arbitrary<number>, kinds: string[]): fc.Arbitrary<Case> =>
  fc.tuple(v4, fc.constantFrom(...kinds)).map(([n, kind]) => {
    const [address, why] = WRAPPERS[kind]!(n);
    return { url: `http://[${address}]/hook`, why: typeof why === 'function' ? why(v4What(n)!) : why };
  });
export const privateWrapped = wrapped(specialV4, Object.keys(WRAPPERS));
// The decision: no IPv4, public or private, makes NAT64, 6to4, Teredo (or the non-global ::/96 forms) acceptable.
export const anyWrapped = wrapped(fc.integer({ min: 0, max: 2 ** 32 - 1 }), Object.keys(WRAPPERS).filter((kind) => !kind.startsWith('IPv4-mapped')));

const toBig = (address: string) => {
  const [head, tail = ''] = address.split('::');
  const left = head === '' ? [] : head!.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.reduce((big, group) => (big << 16n) | BigInt(parseInt(group, 16)), 0n);
};
const fromBig = (big: bigint) => Array.from({ length: 8 }, (_, i) => ((big >> BigInt(112 - 16 * i)) & 0xffffn).toString(16)).join(':');
const MASK128 = (1n << 128n) - 1n;
const V6_RANGES: [string, string][] = [
  ['fe80::/10', LINK_LOCAL], ['fec0::/10', special('deprecatedSiteLocal')], ['ff00::/8', MULTICAST], ['fc00::/7', UNIQUE_LOCAL],
  ['2001:db8::/32', RESERVED], ['3fff::/20', RESERVED], ['2001:2::/48', special('benchmarking')], ['100::/64', special('discard')], ['5f00::/16', special('segmentRouting')],
  // Outside 2000::/3 (what is not special above).
  ['4000::/2', NOT_GLOBAL], ['8000::/2', NOT_GLOBAL], ['c000::/3', NOT_GLOBAL], ['e000::/4', NOT_GLOBAL], ['f000::/5', NOT_GLOBAL], ['f800::/6', NOT_GLOBAL],
  ['1000::/4', NOT_GLOBAL], ['800::/5', NOT_GLOBAL], ['400::/6', NOT_GLOBAL], ['200::/7', NOT_GLOBAL],
];
const inPrefix = (cidr: string) => {
  const [address, length] = cidr.split('/');
  const hostBits = 128n - BigInt(length!);
  const net = toBig(address!) & (MASK128 ^ ((1n << hostBits) - 1n));
  return fc.bigInt({ min: 0n, max: (1n << hostBits) - 1n }).map((host) => net | host);
};
const v6Contains = (cidr: string, big: bigint) => {
  const [address, length] = cidr.split('/');
  const hostBits = 128n - BigInt(length!);
  return big >> hostBits === toBig(address!) >> hostBits;
};
export const specialV6: fc.Arbitrary<Case> = fc
  .constantFrom(...V6_RANGES.map(([cidr]) => cidr))
  .chain(inPrefix)
  .map((big) => {
    const address = canonical6(fromBig(big));
    return { url: `http://[${address}]/hook`, why: refusedAs(address, V6_RANGES.find(([cidr]) => v6Contains(cidr, big))![1]) };
  });
// RIR blocks of 2000::/3, without 2620::/16 (home of the AS112 /48 the check also refuses).
export const publicV6 = fc
  .tuple(fc.integer({ min: 0x2400, max: 0x2dff }).filter((g) => g !== 0x2620), fc.bigInt({ min: 0n, max: (1n << 112n) - 1n }))
  .map(([group, rest]) => canonical6(fromBig((BigInt(group) << 112n) | rest)));
