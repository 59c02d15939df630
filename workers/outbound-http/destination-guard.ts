import { isIPv4, isIPv6 } from 'node:net';

/**
 * Where sys.fetch may connect (AGENT_HTTP_ALLOW). Pure: the HTTP side asks `isDestinationAllowed`
 * for every address it is about to connect to, so a hostname cannot smuggle in a private address.
 */

export interface IpAddress {
  family: 4 | 6;
  bytes: number[];
}

type HostPattern =
  | { kind: 'anyPublic' }
  | { kind: 'name'; name: string }
  | { kind: 'subdomain'; suffix: string }
  | { kind: 'cidr'; base: IpAddress; prefix: number };

export interface AllowRule {
  host: HostPattern;
  /** null: any port. */
  port: number | null;
}

export interface Destination {
  /** The URL's hostname (no brackets for IPv6). */
  hostname: string;
  port: number;
  /** The address about to be connected to. */
  address: string;
}

/** Parses AGENT_HTTP_ALLOW entries; an entry that cannot be parsed allows nothing (fail closed). */
export function parseAllowList(entries: readonly string[]): AllowRule[] {
  return entries.map(parseAllowEntry).filter((rule): rule is AllowRule => rule !== null);
}

/** `api.example.com`, `*.example.com`, `10.1.2.3`, `10.0.0.0/8`, `::1`, `[::1]:8080`, `*`, each with optional `:port`. */
export function parseAllowEntry(entry: string): AllowRule | null {
  const split = splitPort(entry.trim());
  if (!split) return null;
  const host = parseHostPattern(split.host);
  return host ? { host, port: split.port } : null;
}

/**
 * Empty rules: any public address. Otherwise only listed destinations: a listed name, IP or CIDR is
 * allowed even when private; `*` allows every public address.
 */
export function isDestinationAllowed(rules: readonly AllowRule[], destination: Destination): boolean {
  const address = parseIp(destination.address);
  if (!address) return false;
  if (rules.length === 0) return isPublicAddress(address);
  return rules.some((rule) => matchesRule(rule, destination, address));
}

function matchesRule(rule: AllowRule, destination: Destination, address: IpAddress): boolean {
  if (rule.port !== null && rule.port !== destination.port) return false;
  const host = rule.host;
  const name = normaliseHostname(destination.hostname);
  switch (host.kind) {
    case 'anyPublic':
      return isPublicAddress(address);
    case 'name':
      return name === host.name;
    case 'subdomain':
      return name.endsWith('.' + host.suffix);
    case 'cidr':
      return inCidr(address, host.base, host.prefix);
  }
}

function splitPort(entry: string): { host: string; port: number | null } | null {
  if (entry.startsWith('[')) {
    const close = entry.indexOf(']');
    if (close < 0) return null;
    const rest = entry.slice(close + 1);
    const port = rest === '' ? null : rest.startsWith(':') ? parsePort(rest.slice(1)) : NaN;
    // `[2001:db8::]/32` keeps its prefix with the host part.
    if (rest.startsWith('/')) return { host: entry.slice(1, close) + rest, port: null };
    return Number.isNaN(port) ? null : { host: entry.slice(1, close), port };
  }
  const colons = entry.split(':').length - 1;
  if (colons !== 1) return { host: entry, port: null }; // a name, IPv4, or a bare IPv6 address
  const at = entry.lastIndexOf(':');
  const port = parsePort(entry.slice(at + 1));
  return Number.isNaN(port) ? null : { host: entry.slice(0, at), port };
}

function parsePort(text: string): number {
  if (!/^\d{1,5}$/.test(text)) return NaN;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : NaN;
}

function parseHostPattern(text: string): HostPattern | null {
  if (text === '*') return { kind: 'anyPublic' };
  if (text.includes('/')) return parseCidr(text);
  const ip = parseIp(text);
  if (ip) return { kind: 'cidr', base: ip, prefix: ip.bytes.length * 8 };
  const name = normaliseHostname(text);
  if (name.startsWith('*.')) return isHostname(name.slice(2)) ? { kind: 'subdomain', suffix: name.slice(2) } : null;
  return isHostname(name) ? { kind: 'name', name } : null;
}

function parseCidr(text: string): HostPattern | null {
  const [ipText, prefixText = ''] = text.split('/');
  const base = parseIp(ipText ?? '');
  if (!base || !/^\d{1,3}$/.test(prefixText)) return null;
  const prefix = Number(prefixText);
  return prefix <= base.bytes.length * 8 ? { kind: 'cidr', base, prefix } : null;
}

function normaliseHostname(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

function isHostname(name: string): boolean {
  return /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/.test(name);
}

/**
 * Parses an IPv4 or IPv6 address (zone id ignored). IPv4-mapped IPv6 (`::ffff:a.b.c.d`) becomes IPv4,
 * so `::ffff:127.0.0.1` is judged, and matched against rules, as 127.0.0.1.
 */
export function parseIp(text: string): IpAddress | null {
  const plain = text.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIPv4(plain)) return { family: 4, bytes: plain.split('.').map(Number) };
  if (!isIPv6(plain)) return null;
  const bytes = ipv6Bytes(plain);
  const mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return mapped ? { family: 4, bytes: bytes.slice(12) } : { family: 6, bytes };
}

function ipv6Bytes(text: string): number[] {
  let words = text;
  const tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    tail.push(...dotted[1].split('.').map(Number));
    words = text.slice(0, -dotted[1].length) + '0:0'; // placeholder words, replaced by the tail below
  }
  const [head = '', rest] = words.split('::');
  const headWords = head === '' ? [] : head.split(':');
  const restWords = rest === undefined || rest === '' ? [] : rest.split(':');
  const zeros = new Array<string>(8 - headWords.length - restWords.length).fill('0');
  const all = [...headWords, ...(rest === undefined ? [] : zeros), ...restWords];
  const bytes = all.flatMap((word) => {
    const value = parseInt(word, 16);
    return [value >> 8, value & 0xff];
  });
  return tail.length ? [...bytes.slice(0, 12), ...tail] : bytes;
}

function inCidr(address: IpAddress, base: IpAddress, prefix: number): boolean {
  if (address.family !== base.family) return false;
  for (let bit = 0; bit < prefix; bit += 8) {
    const bits = Math.min(8, prefix - bit);
    const mask = (0xff << (8 - bits)) & 0xff;
    const i = bit / 8;
    if (((address.bytes[i] ?? 0) & mask) !== ((base.bytes[i] ?? 0) & mask)) return false;
  }
  return true;
}

const nonPublicV4 = [
  '0.0.0.0/8', // "this network", unspecified
  '10.0.0.0/8',
  '100.64.0.0/10', // carrier-grade NAT
  '127.0.0.0/8',
  '169.254.0.0/16', // link-local, cloud metadata endpoints
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved and broadcast
];

const nonPublicV6 = [
  '::/128', // unspecified
  '::1/128',
  '::/96', // IPv4-compatible (deprecated)
  '100::/64', // discard
  'fc00::/7', // unique local
  'fe80::/10', // link-local
  'fec0::/10', // site-local (deprecated)
  'ff00::/8', // multicast
];

/** IPv6 ranges that carry an IPv4 address (NAT64, 6to4): judged by that address. */
const embeddingV6: { cidr: string; offset: number }[] = [
  { cidr: '64:ff9b::/96', offset: 12 },
  { cidr: '2002::/16', offset: 2 },
];

function toCidrs(list: string[]): { base: IpAddress; prefix: number }[] {
  return list.map((text) => {
    const rule = parseCidr(text);
    if (rule?.kind !== 'cidr') throw new Error(`bad built-in range ${text}`);
    return { base: rule.base, prefix: rule.prefix };
  });
}

const nonPublicRanges = [...toCidrs(nonPublicV4), ...toCidrs(nonPublicV6)];
const embeddingRanges = embeddingV6.map((e) => ({ ...toCidrs([e.cidr])[0]!, offset: e.offset }));

/** False for private, loopback, link-local, unique-local, multicast, unspecified and reserved addresses. */
export function isPublicAddress(address: IpAddress | string): boolean {
  const ip = typeof address === 'string' ? parseIp(address) : address;
  if (!ip) return false;
  if (nonPublicRanges.some((range) => inCidr(ip, range.base, range.prefix))) return false;
  const embedding = embeddingRanges.find((range) => inCidr(ip, range.base, range.prefix));
  if (embedding) return isPublicAddress({ family: 4, bytes: ip.bytes.slice(embedding.offset, embedding.offset + 4) });
  return true;
}
