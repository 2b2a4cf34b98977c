/**
 * Unit tests of the configuration as a client reads it: the lines of every ZooKeeper version,
 * the servers followed (names kept, wildcards replaced, servers without an address skipped),
 * and a TLS client never given a plaintext port.
 */
import { describe, expect, it } from 'vitest';
import { followedServers, formatAddress, parseEnsembleConfig } from './ensemble-config';

describe('parseEnsembleConfig', () => {
  it("reads 3.5's lines, roles, the version, and skips what it cannot read", () => {
    const config = parseEnsembleConfig(
      [
        'server.3=zk-3.zk:2888:3888:observer;zk-3.zk:2181',
        'server.1=10.0.0.1:2888:3888:participant;0.0.0.0:2181',
        'server.2=[fd00::2]:2888:3888;[fd00::2]:2181',
        'server.x=garbage',
        'version=10000000a',
      ].join('\n'),
    );
    expect(config.version).toBe('10000000a');
    expect(config.servers).toEqual([
      {
        serverId: 1,
        role: 'participant',
        quorumHost: '10.0.0.1',
        clientAddress: { host: '0.0.0.0', port: 2181 },
        secureClientAddress: undefined,
      },
      {
        serverId: 2,
        role: 'participant',
        quorumHost: 'fd00::2',
        clientAddress: { host: 'fd00::2', port: 2181 },
        secureClientAddress: undefined,
      },
      {
        serverId: 3,
        role: 'observer',
        quorumHost: 'zk-3.zk',
        clientAddress: { host: 'zk-3.zk', port: 2181 },
        secureClientAddress: undefined,
      },
    ]);
  });

  it("reads 3.10's secure client addresses, and a server with no plaintext port", () => {
    const config = parseEnsembleConfig(
      'server.1=a:1:2;a:2181;a:2281\nserver.2=b:1:2;;b:2281\nserver.3=c:1:2|c2:3:4;2181',
    );
    expect(
      config.servers.map((server) => [server.clientAddress, server.secureClientAddress]),
    ).toEqual([
      [
        { host: 'a', port: 2181 },
        { host: 'a', port: 2281 },
      ],
      [undefined, { host: 'b', port: 2281 }],
      [{ host: '0.0.0.0', port: 2181 }, undefined],
    ]);
    expect(config.servers[2]?.quorumHost).toBe('c');
  });

  it('reads an empty configuration (a standalone server) as no servers', () => {
    expect(parseEnsembleConfig('')).toEqual({ version: '0', servers: [] });
  });
});

describe('followedServers', () => {
  it('keeps names as written and puts the quorum host in place of a wildcard', () => {
    const config = parseEnsembleConfig(
      'server.1=zk-1.zk:2888:3888;0.0.0.0:2181\nserver.2=zk-2.zk:2888:3888;zk-2.zk:2182\nserver.3=zk-3.zk:2888:3888;[::]:2183',
    );
    const chosen = followedServers(config, { tls: false });
    expect(chosen.servers?.map(formatAddress)).toEqual([
      'zk-1.zk:2181',
      'zk-2.zk:2182',
      'zk-3.zk:2183',
    ]);
  });

  it('skips servers without a client address, and follows nothing when none has one', () => {
    const partial = parseEnsembleConfig('server.1=a:1:2;a:2181\nserver.2=b:1:2');
    expect(followedServers(partial, { tls: false })).toEqual({
      servers: [{ host: 'a', port: 2181 }],
      skipped: [2],
    });
    const none = parseEnsembleConfig('server.1=a:1:2\nserver.2=b:1:2\nversion=0');
    expect(followedServers(none, { tls: false }).servers).toBeUndefined();
    expect(followedServers(parseEnsembleConfig(''), { tls: false }).servers).toBeUndefined();
  });

  it('gives a TLS client the secure addresses, and a plaintext one the plain ones', () => {
    const config = parseEnsembleConfig('server.1=a:1:2;a:2181;a:2281\nserver.2=b:1:2;;b:2281');
    expect(followedServers(config, { tls: true }).servers?.map(formatAddress)).toEqual([
      'a:2281',
      'b:2281',
    ]);
    expect(followedServers(config, { tls: false })).toEqual({
      servers: [{ host: 'a', port: 2181 }],
      skipped: [2],
    });
  });

  it("gives a TLS client 3.8's client ports only once they are known to take TLS", () => {
    const config = parseEnsembleConfig('server.1=a:1:2;a:2181\nserver.2=b:1:2;b:2181');
    // Its TLS connection was on a:2181: the client ports take TLS (client.portUnification).
    const taken = followedServers(config, { tls: true, clientPortsTakeTls: true });
    expect(taken.servers).toHaveLength(2);
    // On a:2281 (a secureClientPort the configuration does not name): nothing to follow.
    const refused = followedServers(config, { tls: true });
    expect(refused.servers).toBeUndefined();
    expect(refused.servers === undefined && refused.reason).toMatch(/ZOOKEEPER-4276/);
  });
});
