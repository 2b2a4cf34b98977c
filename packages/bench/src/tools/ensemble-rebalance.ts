/**
 * The ensemble moving under its clients (issue 34): `--clients` zkrx clients, each holding a
 * lock with the default policy (`onSuspended: 'release'`), beside `--java` sessions of Apache's
 * Java client 3.8 following the configuration as ZooKeeper's reconfiguration guide asks (watch,
 * sync, getConfig, a random sleep up to 1 s, `updateServerList`; each holds an ephemeral node),
 * on a 3-server ensemble with `reconfigEnabled` (servers 1–3), grown to 5 (4 and 5 added), then
 * shrunk to 3 other servers (6 added; 1, 2, 3 removed — the leader among them — each stopped
 * once its clients left it, at most 30 s). After each step, once every zkrx client follows the
 * new configuration and 3 s more (the Java side's random sleeps): clients per server (each
 * server's `cons`), zkrx's moves, suspensions and leases ended, the Java sessions' dropped
 * connections (each would end a lease that gives up on a lost connection).
 *
 *   node packages/bench/dist/tools/ensemble-rebalance.js [--clients 60] [--java 60]
 *     [--session-timeout-ms 10000] [--rounds 1] [--host 127.0.0.1]
 *
 * `--host localhost` names every server `localhost` in the configuration (it resolves to
 * 127.0.0.1): the Java client compares its server's address with the list's by host string,
 * and a socket's address that reverse-resolves (`127.0.0.1` → `localhost`) matches no IP
 * literal of the list — so with IP literals every Java session takes its server for removed.
 *
 * One JSON line per step (stdout), a table (stderr).
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient, type ZkClient } from '@zkrx/core';
import { startJavaFollowers } from '@zkrx/interop';
import { acquire, type Lease } from '@zkrx/lock';
import { type Ensemble, startEnsemble } from '@zkrx/testing';
import { toolArgs } from './tool-args';

const args = toolArgs(
  `usage: node packages/bench/dist/tools/ensemble-rebalance.js [--clients 60] [--java 60]
  [--session-timeout-ms 10000] [--rounds 1] [--host 127.0.0.1]

zkrx clients holding locks beside Apache's Java client on an ensemble grown from 3 servers to 5,
then moved to 3 others: clients per server, moves, suspensions, leases ended at each step.`,
  {
    clients: '60',
    java: '60',
    'session-timeout-ms': '10000',
    rounds: '1',
    host: '127.0.0.1',
  },
);
const clientCount = args.count('clients', 1);
const javaCount = args.count('java', 0);
const sessionTimeoutMs = args.count('session-timeout-ms', 1);
const rounds = args.count('rounds', 1);

interface Tracked {
  readonly client: ZkClient;
  readonly lease: Lease;
  suspensions: number;
  expiries: number;
  moves: number;
  handOffs: number;
  leaseEnded: boolean;
}

/** Session ids (hex, no 0x) per running member of the configuration, by server id. */
async function sessionsPerServer(ensemble: Ensemble): Promise<Map<number, Set<string>>> {
  const counts = new Map<number, Set<string>>();
  for (const server of ensemble.servers) {
    if (!server.running || !server.inConfiguration) continue;
    const cons = await server.fourLetterWord('cons').catch(() => '');
    counts.set(
      server.serverId,
      new Set([...cons.matchAll(/sid=0x([0-9a-f]+)/gi)].map((match) => match[1]!.toLowerCase())),
    );
  }
  return counts;
}

async function round(index: number): Promise<void> {
  const host = args.text('host');
  const ensemble = await startEnsemble({ size: 3, reconfig: true, tmpfs: true, host });
  const tracked: Tracked[] = [];
  let java: Awaited<ReturnType<typeof startJavaFollowers>> | undefined;
  try {
    const admin = createClient({ connect: ensemble.connectString });
    await admin.connected();
    await admin.promises.mkdirp('/ensemble-bench/java');
    await admin.close();
    const started = performance.now();
    const notes: string[][] = [];
    for (let client = 0; client < clientCount; client++) {
      // What each client logged lately: printed for those that were suspended.
      const recent: string[] = [];
      notes.push(recent);
      const note = (message: string) => {
        recent.push(`${Math.round(performance.now() - started)} ms ${message}`);
        if (recent.length > 30) recent.shift();
      };
      const made = createClient({
        connect: ensemble.connectString,
        sessionTimeoutMs,
        logLevel: 'info',
        logger: { info: note, warn: note, error: note },
      });
      await made.connected();
      const lease = await acquire(made, `/ensemble-bench/locks/lock-${client}`);
      const entry: Tracked = {
        client: made,
        lease,
        suspensions: 0,
        expiries: 0,
        moves: 0,
        handOffs: 0,
        leaseEnded: false,
      };
      made.session$.subscribe(({ state }) => {
        if (state === 'suspended') entry.suspensions += 1;
        if (state === 'expired') entry.expiries += 1;
      });
      made.ensemble$.subscribe((view) => {
        entry.moves = view.moves;
        entry.handOffs = view.handOffs;
      });
      lease.signal.addEventListener('abort', () => {
        entry.leaseEnded = true;
      });
      tracked.push(entry);
    }
    java = await startJavaFollowers({
      connectString: ensemble.connectString,
      count: javaCount,
      sessionTimeoutMs,
      path: '/ensemble-bench/java',
    });
    const javaSessions = new Set(java.sessions.map((id) => id.toLowerCase()));
    const zkrxSession = (entry: Tracked) => entry.client.sessionId?.toLowerCase() ?? '';

    const measure = async (step: string, tookMs: number) => {
      // Every zkrx client follows the configuration, then the Java side's sleeps pass.
      const hosts = ensemble.connectString.split(',').sort().join(',');
      const deadline = performance.now() + 60_000;
      while (
        performance.now() < deadline &&
        !tracked.every((entry) => [...entry.client.hosts].sort().join(',') === hosts)
      ) {
        await sleep(100);
      }
      await sleep(3_000);
      // ...and every zkrx session is on a server of the configuration again (one coming back
      // from a hand-off or finishing a move is on none for a moment).
      const zkrxIds = new Set(tracked.map(zkrxSession));
      let perServer = await sessionsPerServer(ensemble);
      const placed = () =>
        [...perServer.values()].reduce(
          (sum, ids) => sum + [...ids].filter((id) => zkrxIds.has(id)).length,
          0,
        );
      while (performance.now() < deadline && placed() < tracked.length) {
        await sleep(200);
        perServer = await sessionsPerServer(ensemble);
      }
      const report = await java!.report();
      const line = {
        round: index,
        host,
        step,
        tookMs: Math.round(tookMs),
        servers: [...perServer.keys()],
        zkrxPerServer: [...perServer.values()].map(
          (ids) => [...ids].filter((id) => zkrxIds.has(id)).length,
        ),
        javaPerServer: [...perServer.values()].map(
          (ids) => [...ids].filter((id) => javaSessions.has(id)).length,
        ),
        zkrxMoves: tracked.reduce((sum, entry) => sum + entry.moves, 0),
        zkrxHandOffs: tracked.reduce((sum, entry) => sum + entry.handOffs, 0),
        zkrxSuspensions: tracked.reduce((sum, entry) => sum + entry.suspensions, 0),
        zkrxExpiries: tracked.reduce((sum, entry) => sum + entry.expiries, 0),
        leasesEnded: tracked.filter((entry) => entry.leaseEnded).length,
        javaDisconnects: report.disconnects.reduce((sum, count) => sum + count, 0),
        javaSessionsDisconnected: report.disconnects.filter((count) => count > 0).length,
        javaExpiries: report.expired.reduce((sum, count) => sum + count, 0),
        javaUpdates: report.updates.reduce((sum, count) => sum + count, 0),
        load1: Math.round(loadavg()[0]! * 10) / 10,
      };
      process.stdout.write(`${JSON.stringify(line)}\n`);
      process.stderr.write(
        `| ${step} | ${line.servers.join(', ')} | ${line.zkrxPerServer.join(' / ')} | ${line.javaPerServer.join(' / ')} | ${line.zkrxMoves} (+${line.zkrxHandOffs} hand-offs) | ${line.zkrxSuspensions} | ${line.leasesEnded} | ${line.javaDisconnects} (${line.javaSessionsDisconnected} sessions) | ${line.load1} |\n`,
      );
    };

    process.stderr.write(
      `round ${index}: ${clientCount} zkrx clients (a lock each), ${javaCount} Java sessions, session timeout ${sessionTimeoutMs} ms, servers named ${host}\n` +
        '| step | servers | zkrx per server | Java per server | zkrx moves | zkrx suspensions | leases ended | Java dropped connections | load |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n',
    );
    await measure('3 servers', 0);
    const growing = performance.now();
    await ensemble.addServer({ host });
    await ensemble.addServer({ host });
    await measure('grown to 5', performance.now() - growing);
    const shrinking = performance.now();
    await ensemble.addServer({ host });
    for (const server of [0, 1, 2]) {
      await ensemble.removeServer(server);
      for (const recent of notes)
        recent.push(
          `${Math.round(performance.now() - started)} ms -- server ${server + 1} removed and stopped`,
        );
    }
    await measure('shrunk to 3 others', performance.now() - shrinking);
    for (const [client, entry] of tracked.entries()) {
      if (entry.suspensions === 0) continue;
      process.stderr.write(
        `client ${client} was suspended; what it logged last:\n  ${notes[client]!.join('\n  ')}\n`,
      );
    }
  } finally {
    await java?.close();
    await Promise.all(tracked.map((entry) => entry.client.close()));
    await ensemble.close();
  }
}

for (let index = 1; index <= rounds; index++) await round(index);
