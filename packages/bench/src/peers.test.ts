import { CURATOR_JARS, interopLocations } from '@zkrx/interop';
import { describe, expect, it } from 'vitest';
import { findPeersDir, javaPeerCommand } from './peers';

describe('findPeersDir', () => {
  it('finds the nearest shared/peers with CuratorBench.java above a folder', () => {
    const present = new Set(['/work/shared/peers/CuratorBench.java']);
    const exists = (path: string) => present.has(path);
    expect(findPeersDir('/work/wt/branch/packages/bench/dist', exists)).toBe('/work/shared/peers');
    expect(findPeersDir('/elsewhere/repo', exists)).toBeUndefined();
  });
});

describe('javaPeerCommand', () => {
  it('is run-peers.sh command line: the jars, the source file, the peers options', () => {
    const command = javaPeerCommand(
      '/p',
      { connect: '127.0.0.1:2191', scenario: 'floor-create-delete', clients: 1, ops: 2000 },
      ['--stall-s', '10'],
      { ZKRX_CURATOR_CLASSPATH: '/j/a.jar:/j/b.jar' },
    );
    expect(command.slice(0, 3)).toEqual(['java', '-cp', '/j/a.jar:/j/b.jar']);
    expect(command.slice(3)).toEqual([
      '/p/CuratorBench.java',
      '--connect',
      '127.0.0.1:2191',
      '--scenario',
      'floor-create-delete',
      '--clients',
      '1',
      '--ops',
      '2000',
      '--stall-s',
      '10',
    ]);
  });
});

describe('the Curator class path', () => {
  const run = {
    connect: '127.0.0.1:2191',
    scenario: 'floor-create-delete' as const,
    clients: 1,
    ops: 1,
  };

  it("is one list for the floor, the interop peers and side-by-side.sh: Debian's jars, in order", () => {
    const debian = CURATOR_JARS.map((jar) => `/usr/share/java/${jar}.jar`).join(':');
    expect(debian.split(':')).toHaveLength(16);
    expect(debian.split(':')[0]).toBe('/usr/share/java/curator-recipes.jar');
    // side-by-side.sh prints interopLocations().curatorClasspath (tools/curator-classpath.ts).
    expect(interopLocations({}).curatorClasspath).toBe(debian);
    expect(javaPeerCommand('/p', run, [], {})[2]).toBe(debian);
  });

  it('is ZKRX_CURATOR_CLASSPATH when set, for all of them', () => {
    const env = { ZKRX_CURATOR_CLASSPATH: '/opt/curator/all.jar' };
    expect(interopLocations(env).curatorClasspath).toBe('/opt/curator/all.jar');
    expect(javaPeerCommand('/p', run, [], env)[2]).toBe('/opt/curator/all.jar');
  });
});
