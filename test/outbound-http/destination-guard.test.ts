import assert from 'node:assert/strict';
import {
  isDestinationAllowed,
  isPublicAddress,
  parseAllowEntry,
  parseAllowList,
  parseIp,
} from '../../workers/outbound-http/destination-guard.js';

function allowed(entries: string[], hostname: string, address = hostname, port = 443): boolean {
  return isDestinationAllowed(parseAllowList(entries), { hostname, port, address });
}

describe('destination guard', () => {
  describe('isPublicAddress', () => {
    it('accepts public IPv4 and IPv6 addresses', () => {
      for (const address of ['8.8.8.8', '1.1.1.1', '93.184.216.34', '2001:4860:4860::8888', '::ffff:8.8.8.8']) {
        assert.equal(isPublicAddress(address), true, address);
      }
    });

    it('refuses private, loopback, link-local, unique-local, multicast and unspecified addresses', () => {
      const refused = [
        '10.1.2.3',
        '172.16.0.1',
        '172.31.255.255',
        '192.168.1.1',
        '127.0.0.1',
        '127.255.0.9',
        '169.254.169.254',
        '0.0.0.0',
        '100.64.0.1',
        '224.0.0.1',
        '255.255.255.255',
        '::',
        '::1',
        'fe80::1',
        'fe80::1%eth0',
        'fc00::1',
        'fd12:3456::1',
        'ff02::1',
      ];
      for (const address of refused) assert.equal(isPublicAddress(address), false, address);
    });

    it('judges IPv4-mapped and IPv4-embedding IPv6 addresses by their IPv4 address', () => {
      assert.equal(isPublicAddress('::ffff:127.0.0.1'), false);
      assert.equal(isPublicAddress('::ffff:7f00:1'), false);
      assert.equal(isPublicAddress('::ffff:a00:1'), false);
      assert.equal(isPublicAddress('64:ff9b::a00:1'), false);
      assert.equal(isPublicAddress('2002:c0a8:0101::1'), false);
      assert.equal(isPublicAddress('2002:0808:0808::1'), true);
    });

    it('refuses what is not an address', () => {
      assert.equal(isPublicAddress('example.com'), false);
      assert.equal(isPublicAddress(''), false);
    });
  });

  describe('parseIp', () => {
    it('parses IPv6 with compression and a dotted tail', () => {
      assert.deepEqual(parseIp('::1')?.bytes, [...new Array<number>(15).fill(0), 1]);
      assert.deepEqual(parseIp('::ffff:1.2.3.4'), { family: 4, bytes: [1, 2, 3, 4] });
      assert.deepEqual(parseIp('[2001:db8::1]')?.bytes.slice(0, 4), [0x20, 0x01, 0x0d, 0xb8]);
    });
  });

  describe('parseAllowEntry', () => {
    it('reads names, wildcards, IPs, CIDRs, * and ports', () => {
      assert.deepEqual(parseAllowEntry('api.example.com'), { host: { kind: 'name', name: 'api.example.com' }, port: null });
      assert.deepEqual(parseAllowEntry('API.Example.com:8443'), { host: { kind: 'name', name: 'api.example.com' }, port: 8443 });
      assert.deepEqual(parseAllowEntry('*.example.com'), { host: { kind: 'subdomain', suffix: 'example.com' }, port: null });
      assert.deepEqual(parseAllowEntry('*'), { host: { kind: 'anyPublic' }, port: null });
      assert.deepEqual(parseAllowEntry('*:443'), { host: { kind: 'anyPublic' }, port: 443 });
      assert.equal(parseAllowEntry('10.0.0.0/8')?.host.kind, 'cidr');
      assert.equal(parseAllowEntry('[::1]:8080')?.port, 8080);
      assert.equal(parseAllowEntry('fd00::/8')?.host.kind, 'cidr');
    });

    it('gives null for entries it cannot read, so they allow nothing', () => {
      for (const entry of ['', 'exa mple.com', '10.0.0.0/33', 'host:99999', 'host:0', '[::1', 'a:b:c/x']) {
        assert.equal(parseAllowEntry(entry), null, entry);
      }
      assert.deepEqual(parseAllowList(['', 'bad host']), []);
    });
  });

  describe('isDestinationAllowed', () => {
    it('with an empty list allows any public destination and refuses private ones', () => {
      assert.equal(allowed([], 'example.com', '93.184.216.34'), true);
      assert.equal(allowed([], 'localhost', '127.0.0.1'), false);
      assert.equal(allowed([], 'metadata', '169.254.169.254'), false);
      assert.equal(allowed([], 'x', '::ffff:127.0.0.1'), false);
    });

    it('with a list allows only listed destinations', () => {
      assert.equal(allowed(['api.example.com'], 'api.example.com', '93.184.216.34'), true);
      assert.equal(allowed(['api.example.com'], 'API.EXAMPLE.COM.', '93.184.216.34'), true);
      assert.equal(allowed(['api.example.com'], 'other.example.com', '93.184.216.34'), false);
      assert.equal(allowed(['10.0.0.0/8'], 'public.example', '8.8.8.8'), false);
    });

    it('allows a listed private host, IP or range', () => {
      assert.equal(allowed(['intranet.local'], 'intranet.local', '10.0.0.5'), true);
      assert.equal(allowed(['127.0.0.1'], '127.0.0.1'), true);
      assert.equal(allowed(['127.0.0.1'], 'x', '::ffff:127.0.0.1'), true);
      assert.equal(allowed(['10.0.0.0/8'], '10.2.3.4'), true);
      assert.equal(allowed(['10.0.0.0/8'], '11.0.0.1'), false);
      assert.equal(allowed(['::1'], '::1'), true);
      assert.equal(allowed(['fd00::/8'], 'fd12::1'), true);
    });

    it('matches wildcards on subdomains only', () => {
      assert.equal(allowed(['*.example.com'], 'a.example.com', '10.0.0.1'), true);
      assert.equal(allowed(['*.example.com'], 'a.b.example.com', '93.184.216.34'), true);
      assert.equal(allowed(['*.example.com'], 'example.com', '93.184.216.34'), false);
      assert.equal(allowed(['*.example.com'], 'badexample.com', '93.184.216.34'), false);
    });

    it('lets * add every public address, not private ones', () => {
      assert.equal(allowed(['*'], 'example.com', '93.184.216.34'), true);
      assert.equal(allowed(['*'], 'localhost', '127.0.0.1'), false);
      assert.equal(allowed(['*', '127.0.0.1'], 'localhost', '127.0.0.1'), true);
    });

    it('honours a port suffix', () => {
      assert.equal(allowed(['127.0.0.1:8080'], '127.0.0.1', '127.0.0.1', 8080), true);
      assert.equal(allowed(['127.0.0.1:8080'], '127.0.0.1', '127.0.0.1', 8081), false);
      assert.equal(allowed(['[::1]:8080'], '::1', '::1', 8080), true);
      assert.equal(allowed(['api.example.com:443'], 'api.example.com', '93.184.216.34', 80), false);
    });
  });
});
