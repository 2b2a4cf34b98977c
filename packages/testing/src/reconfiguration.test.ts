/** Unit tests of parseConfiguration: versions, roles, client addresses, lines without one. */
import { describe, expect, it } from 'vitest';
import { parseConfiguration, superDigestProperty } from './reconfiguration';

describe('parseConfiguration', () => {
  it('reads versions, roles and client addresses, and servers without one', () => {
    const configuration = parseConfiguration(
      [
        'server.2=zk-2:2888:3888:observer;zk-2:2181',
        'server.1=zk-1:2888:3888:participant;0.0.0.0:2181',
        'server.3=zk-3:2888:3888',
        'version=10000000a',
      ].join('\n'),
    );
    expect(configuration.version).toBe('10000000a');
    expect(configuration.servers).toEqual([
      { serverId: 1, role: 'participant', clientAddress: '0.0.0.0:2181' },
      { serverId: 2, role: 'observer', clientAddress: 'zk-2:2181' },
      { serverId: 3, role: 'participant', clientAddress: undefined },
    ]);
  });
});

describe('superDigestProperty', () => {
  it("is ZooKeeper's super digest of the password", () => {
    // base64(sha1('super:secret')), as DigestAuthenticationProvider.generateDigest writes it.
    expect(superDigestProperty('secret')).toEqual({
      'zookeeper.DigestAuthenticationProvider.superDigest': 'super:lK75jTNcA+U9vtVEw5vB51mj/w4=',
    });
  });
});
