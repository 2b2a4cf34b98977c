/**
 * Unit tests of renderZooCfg: the settings every test server needs, session bounds,
 * quorum members, one-member ensembles and extraConfig overrides.
 */
import { describe, expect, it } from 'vitest';
import { renderZooCfg } from './zoo-cfg';

const parse = (text: string) =>
  Object.fromEntries(
    text
      .trim()
      .split('\n')
      .map((line) => line.split(/=(.*)/s).slice(0, 2)),
  );

describe('renderZooCfg', () => {
  const base = { dataDir: '/tmp/zk/data', clientPort: 2999, host: '127.0.0.1', tickTime: 500 };

  it('has the settings every test server needs', () => {
    expect(parse(renderZooCfg(base))).toEqual({
      tickTime: '500',
      dataDir: '/tmp/zk/data',
      clientPort: '2999',
      clientPortAddress: '127.0.0.1',
      maxClientCnxns: '0',
      'admin.enableServer': 'false',
      '4lw.commands.whitelist': '*',
    });
  });

  it('sets session timeout bounds only when given', () => {
    const cfg = parse(
      renderZooCfg({ ...base, minSessionTimeoutMs: 700, maxSessionTimeoutMs: 9000 }),
    );
    expect(cfg.minSessionTimeout).toBe('700');
    expect(cfg.maxSessionTimeout).toBe('9000');
  });

  it('lists the quorum members with their quorum and election ports', () => {
    const cfg = parse(
      renderZooCfg({
        ...base,
        quorum: [
          { id: 1, quorumPort: 3001, electionPort: 3002 },
          { id: 2, quorumPort: 3003, electionPort: 3004 },
          { id: 3, quorumPort: 3005, electionPort: 3006 },
        ],
      }),
    );
    expect(cfg['server.1']).toBe('127.0.0.1:3001:3002');
    expect(cfg['server.3']).toBe('127.0.0.1:3005:3006');
    expect(cfg.initLimit).toBeDefined();
    expect(cfg.syncLimit).toBeDefined();
    expect(cfg.standaloneEnabled).toBeUndefined();
  });

  it('turns standalone mode off for a one-member ensemble', () => {
    const cfg = parse(
      renderZooCfg({ ...base, quorum: [{ id: 1, quorumPort: 1, electionPort: 2 }] }),
    );
    expect(cfg.standaloneEnabled).toBe('false');
  });

  it('writes roles and client addresses, and no clientPort, with reconfiguration enabled', () => {
    const cfg = parse(
      renderZooCfg({
        ...base,
        reconfigEnabled: true,
        quorum: [
          { id: 1, quorumPort: 3001, electionPort: 3002, clientPort: 2999 },
          { id: 4, quorumPort: 3007, electionPort: 3008, clientPort: 3009, role: 'observer' },
          { id: 5, quorumPort: 3010, electionPort: 3011, clientPort: 3012, host: 'localhost' },
        ],
      }),
    );
    expect(cfg['server.1']).toBe('127.0.0.1:3001:3002:participant;127.0.0.1:2999');
    expect(cfg['server.4']).toBe('127.0.0.1:3007:3008:observer;127.0.0.1:3009');
    expect(cfg['server.5']).toBe('localhost:3010:3011:participant;localhost:3012');
    expect(cfg.reconfigEnabled).toBe('true');
    expect(cfg.standaloneEnabled).toBe('false');
    expect(cfg.clientPort).toBeUndefined();
    expect(cfg.clientPortAddress).toBeUndefined();
  });

  it('lets extraConfig override anything', () => {
    const cfg = parse(renderZooCfg({ ...base, extraConfig: { tickTime: '2000', 'a.b': 'c=d' } }));
    expect(cfg.tickTime).toBe('2000');
    expect(cfg['a.b']).toBe('c=d');
  });
});
