/**
 * The driver without a server: reply correlation, failures of the peer process, close and
 * kill, and the availability checks (with runtimes that do not exist).
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { childrenRunning, isAlive } from '../test/processes';
import { interopLocations, peerAvailability } from './availability';
import { InteropUnavailableError, PeerError } from './errors';
import { launchPeer, type PeerEvent, startPeer } from './peer';

const fakePeer = fileURLToPath(new URL('../test/fake-peer.mjs', import.meta.url));
const fake = (mode: string) => ({ command: process.execPath, args: [fakePeer, mode] });

describe('peer driver', () => {
  it('correlates replies by id, whatever their order, and passes events on', async () => {
    const peer = await launchPeer('curator', fake('normal'));
    const events: PeerEvent[] = [];
    peer.onEvent((event) => events.push(event));
    expect(peer.version).toBe('0.0.1');
    const slow = peer.acquire('mutex', '/slow');
    const fast = await peer.acquire('mutex', '/fast');
    expect(fast.node).toBe(`/fast/n-${fast.id}`);
    const late = await slow;
    expect(late.node).toBe(`/slow/n-${late.id}`);
    expect(late.id).not.toBe(fast.id);
    expect(events).toEqual([{ event: 'connection', session: 'default', state: 'CONNECTED' }]);
    await peer.release(fast.id);
    await peer.close();
    expect(isAlive(peer.pid)).toBe(false);
  });

  it("turns the peer's refusals into PeerError with the peer's code", async () => {
    const peer = await launchPeer('kazoo', fake('normal'));
    const error = await peer.acquire('mutex', '/x', { timeoutMs: 10 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PeerError);
    expect(error).toMatchObject({ peer: 'kazoo', command: 'acquire mutex', code: 'timeout' });
    await peer.close();
  });

  it('rejects what is pending with `exited` and the end of stderr when the peer dies', async () => {
    const peer = await launchPeer('curator', fake('crash-on-acquire'));
    const error = await peer.acquire('mutex', '/x').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'exited' });
    expect((error as PeerError).message).toContain('fake peer: crashing as asked');
    expect(await peer.exited).toEqual({ code: 3, signal: null });
    await expect(peer.ping()).rejects.toMatchObject({ code: 'exited' });
    await peer.close(); // nothing left to do, and no error
  });

  it('kills a peer that ignores quit and the end of its stdin', async () => {
    const peer = await launchPeer('curator', fake('stubborn'), { closeTimeoutMs: 300 });
    const started = performance.now();
    await peer.close();
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
    expect(await peer.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(isAlive(peer.pid)).toBe(false);
  });

  it('fails to start with the reason the peer gives, and leaves no process', async () => {
    await expect(launchPeer('curator', fake('start-error'))).rejects.toMatchObject({
      code: 'start-failed',
      message: expect.stringContaining('cannot reach ZooKeeper'),
    });
    await expect(
      launchPeer('curator', fake('silent'), { startTimeoutMs: 300 }),
    ).rejects.toMatchObject({ code: 'start-failed', message: expect.stringContaining('300 ms') });
    await expect(
      launchPeer('kazoo', { command: '/nonexistent/python3', args: [] }),
    ).rejects.toMatchObject({ code: 'start-failed', message: expect.stringContaining('ENOENT') });
    expect(childrenRunning(fakePeer)).toEqual([]);
  });
});

describe('peerAvailability', () => {
  const missing = {
    ...interopLocations({}),
    java: '/nonexistent/bin/java',
    curatorClasspath: '/nonexistent/curator-recipes.jar',
    python: '/nonexistent/python3',
  };

  it('says why each peer cannot run', () => {
    const availability = peerAvailability(missing);
    expect(availability.curator).toEqual({
      available: false,
      reason: expect.stringContaining('/nonexistent/curator-recipes.jar'),
    });
    expect(availability.kazoo).toEqual({
      available: false,
      reason: expect.stringContaining('/nonexistent/python3 not found'),
    });
    const noJava = peerAvailability({ ...interopLocations({}), java: '/nonexistent/bin/java' });
    expect(noJava.curator.reason).toMatch(/\/nonexistent\/bin\/java -version failed/);
    const noKazoo = peerAvailability({ ...interopLocations({}), python: '/bin/false' });
    expect(noKazoo.kazoo.reason).toMatch(/cannot import kazoo/);
  });

  it('makes startPeer reject with InteropUnavailableError', async () => {
    const error = await startPeer('kazoo', {
      connectString: '127.0.0.1:1',
      locations: missing,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InteropUnavailableError);
    expect(error).toMatchObject({ peer: 'kazoo', reason: expect.stringContaining('python3') });
  });

  it('reads the locations from the environment', () => {
    expect(
      interopLocations({
        ZKRX_JAVA: '/opt/jdk/bin/java',
        ZKRX_CURATOR_CLASSPATH: '/a.jar:/b.jar',
        ZKRX_KAZOO_PYTHON: '/venv/bin/python',
      }),
    ).toEqual({
      java: '/opt/jdk/bin/java',
      javac: '/opt/jdk/bin/javac',
      curatorClasspath: '/a.jar:/b.jar',
      python: '/venv/bin/python',
    });
    expect(interopLocations({ JAVA_HOME: '/usr/lib/jvm/17' }).java).toBe(
      '/usr/lib/jvm/17/bin/java',
    );
    expect(interopLocations({}).python).toBe('/usr/bin/python3');
  });
});
