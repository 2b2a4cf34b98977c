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
      '/j',
    );
    expect(command[0]).toBe('java');
    expect(command[2]?.split(':')[0]).toBe('/j/curator-recipes.jar');
    expect(command[2]?.split(':')).toHaveLength(16);
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
