/**
 * Logging against a real ZooKeeper: the transport's lines reach the configured logger at its
 * level, and a client without a logger prints nothing at all (checked in a child process).
 */
import { freePorts, testZooKeeper } from '@zkrx/testing';
import { describe, expect, it } from 'vitest';
import { bundleCore, runNode } from '../../test/child-process';
import { connectedClient, logCollector, transportName, waitFor } from '../../test/support';

describe('logger', () => {
  // The stock binding of the native transport prints the C client's lines itself (stderr) and
  // gives the logger none of them: a documented limit of that transport.
  it.runIf(transportName === 'typescript')(
    "logs the session's establishment, at the logger's level",
    async () => {
      const info = logCollector();
      const warnOnly = logCollector();
      const quiet = await connectedClient({ logger: warnOnly.logger }); // logLevel: warn by default
      const client = await connectedClient({ logger: info.logger, logLevel: 'info' });
      await waitFor(() =>
        info.lines.some((line) => line.message.includes('session establishment complete')),
      );
      const established = info.lines.find((line) =>
        line.message.includes('session establishment complete'),
      )!;
      expect(established.level).toBe('info');
      expect(established.context).toEqual({
        sessionId: client.sessionId,
        server: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
      });
      expect(established.message).toContain(`sessionId=0x${client.sessionId}`);
      // Lines are trimmed, one per call, and never below the logger's level.
      for (const line of info.lines) {
        expect(line.message).toBe(line.message.trim());
        expect(['info', 'warn', 'error']).toContain(line.level);
      }
      expect(warnOnly.lines.filter((line) => line.level === 'info')).toEqual([]);
      expect(quiet.state).toBe('connected');
    },
  );

  it("writes zkrx's own session events at debug, and survives a throwing logger", async () => {
    const debug = logCollector();
    const client = await connectedClient({ logger: debug.logger, logLevel: 'debug' });
    expect(
      debug.lines.some((line) => line.level === 'debug' && line.message === 'session connected'),
    ).toBe(true);
    const throwing = await connectedClient({
      logLevel: 'debug',
      logger: {
        debug: () => {
          throw new Error('logger down');
        },
        info: () => {
          throw new Error('logger down');
        },
      },
    });
    expect(throwing.state).toBe('connected');
    expect(await throwing.promises.exists('/')).not.toBeNull();
    expect(client.state).toBe('connected');
  });

  it('prints nothing to stdout or stderr without a logger, even when the connection fails', async () => {
    const { connectString } = await testZooKeeper();
    const [port] = await freePorts(1);
    const bundle = await bundleCore();
    const transport = transportName === 'native' ? 'transport: nativeTransport(),' : '';
    try {
      const script = (logging: string) => {
        const clientOptions = `${transport} ${logging}`;
        return `
        const { createClient, nativeTransport } = require(${JSON.stringify(bundle.file)});
        (async () => {
          const dead = createClient({ connect: '127.0.0.1:${port}', connectTimeoutMs: 500, ${clientOptions} });
          await dead.connected().then(() => { throw new Error('connected to a dead port?'); }, () => {});
          await dead.close();
          const client = createClient({ connect: ${JSON.stringify(connectString)}, sessionTimeoutMs: 4000, ${clientOptions} });
          await client.connected();
          await client.promises.exists('/');
          await client.close();
        })().catch((error) => { process.exitCode = 1; process.stderr.write('FAILED ' + error.stack); });
      `;
      };
      const silent = await runNode(script(''));
      expect(silent).toEqual({ code: 0, stdout: '', stderr: '' });
      // The same run with a logger does print: the capture works.
      const logged = await runNode(script("logger: console, logLevel: 'info'"));
      expect(logged.code).toBe(0);
      if (transportName === 'native') {
        // The stock C client prints its own lines to stderr.
        expect(logged.stderr).toContain('session establishment complete');
        expect(logged.stderr).toContain('Connection refused');
      } else {
        expect(logged.stdout).toContain('session establishment complete');
        expect(logged.stderr).toContain('ECONNREFUSED');
      }
    } finally {
      bundle.remove();
    }
  });
});
