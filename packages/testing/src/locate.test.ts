/**
 * Unit tests of locateZooKeeper over fake directory trees: ZOOKEEPER_HOME, Debian's jars,
 * zkServer.sh on PATH, Java discovery and the install hint.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ZooKeeperNotFoundError } from './errors';
import { locateZooKeeper } from './locate';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'zkrx-locate-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** Creates empty files (and their directories) under the fake root. */
const files = (...paths: string[]) => {
  for (const path of paths) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), '');
  }
};
const executable = (path: string) => {
  files(path);
  chmodSync(join(root, path), 0o755);
  return join(root, path);
};
const at = (path: string) => join(root, path);
/** An environment with a fake `java` on PATH and nothing else. */
const env = (extra: Record<string, string> = {}) => {
  executable('jdk/bin/java');
  return { PATH: at('jdk/bin'), ...extra };
};
const noDebian = () => at('no-debian');

describe('locateZooKeeper', () => {
  it('uses ZOOKEEPER_HOME first: lib/*.jar, *.jar and conf/', () => {
    files(
      'zk/lib/zookeeper-3.8.4.jar',
      'zk/lib/zookeeper-jute-3.8.4.jar',
      'zk/lib/logback-classic-1.2.13.jar',
      'zk/lib/README.txt',
      'zk/zookeeper-extra.jar',
      'zk/conf/zoo_sample.cfg',
      'debian/zookeeper.jar',
      'debian/zookeeper-jute.jar',
    );
    const found = locateZooKeeper({
      env: env({ ZOOKEEPER_HOME: at('zk') }),
      debianJavaDir: at('debian'),
    });
    expect(found).toEqual({
      java: at('jdk/bin/java'),
      source: 'zookeeper-home',
      home: at('zk'),
      logging: 'logback',
      classpath: [
        at('zk/lib/logback-classic-1.2.13.jar'),
        at('zk/lib/zookeeper-3.8.4.jar'),
        at('zk/lib/zookeeper-jute-3.8.4.jar'),
        at('zk/zookeeper-extra.jar'),
        at('zk/conf'),
      ],
    });
  });

  it('prefers the zookeeperHome option over ZOOKEEPER_HOME', () => {
    files('a/lib/zookeeper-3.8.0.jar', 'b/lib/zookeeper-3.8.1.jar');
    const found = locateZooKeeper({
      zookeeperHome: at('b'),
      env: env({ ZOOKEEPER_HOME: at('a') }),
      debianJavaDir: noDebian(),
    });
    expect(found.home).toBe(at('b'));
  });

  it('fails on a home without a ZooKeeper jar instead of silently looking elsewhere', () => {
    files('zk/lib/zookeeper-jute-3.8.0.jar', 'debian/zookeeper.jar', 'debian/zookeeper-jute.jar');
    expect(() =>
      locateZooKeeper({ env: env({ ZOOKEEPER_HOME: at('zk') }), debianJavaDir: at('debian') }),
    ).toThrow(/ZOOKEEPER_HOME=.* holds no ZooKeeper jar/);
  });

  it("falls back to Debian's jars, listing jute and the slf4j-simple binding", () => {
    files(
      'debian/zookeeper.jar',
      'debian/zookeeper-jute.jar',
      'debian/slf4j-api.jar',
      'debian/slf4j-simple.jar',
      'debian/netty-handler.jar',
    );
    const found = locateZooKeeper({ env: env(), debianJavaDir: at('debian') });
    expect(found).toEqual({
      java: at('jdk/bin/java'),
      source: 'debian',
      logging: 'slf4j-simple',
      classpath: [
        at('debian/zookeeper.jar'),
        at('debian/zookeeper-jute.jar'),
        at('debian/slf4j-api.jar'),
        at('debian/slf4j-simple.jar'),
      ],
    });
  });

  it('skips a Debian dir without jute', () => {
    files('debian/zookeeper.jar');
    expect(() => locateZooKeeper({ env: env(), debianJavaDir: at('debian') })).toThrow(
      ZooKeeperNotFoundError,
    );
  });

  it('derives the home from zkServer.sh on PATH, following symlinks', () => {
    files('opt/zk-3.8/lib/zookeeper-3.8.0.jar', 'opt/zk-3.8/lib/slf4j-simple-1.7.jar');
    executable('opt/zk-3.8/bin/zkServer.sh');
    mkdirSync(at('usr/bin'), { recursive: true });
    symlinkSync(at('opt/zk-3.8/bin/zkServer.sh'), at('usr/bin/zkServer.sh'));
    const environment = env();
    const found = locateZooKeeper({
      env: { ...environment, PATH: `${environment.PATH}:${at('usr/bin')}` },
      debianJavaDir: noDebian(),
    });
    expect(found.source).toBe('path');
    expect(found.home).toBe(at('opt/zk-3.8'));
    expect(found.classpath).toContain(at('opt/zk-3.8/lib/zookeeper-3.8.0.jar'));
  });

  it("finds Homebrew's zkServer with its jars under libexec", () => {
    files('brew/libexec/lib/zookeeper-3.8.0.jar');
    executable('brew/bin/zkServer');
    const environment = env();
    const found = locateZooKeeper({
      env: { ...environment, PATH: `${environment.PATH}:${at('brew/bin')}` },
      debianJavaDir: noDebian(),
    });
    expect(found.home).toBe(at('brew/libexec'));
  });

  it('prefers JAVA_HOME over PATH and ignores a non-executable java', () => {
    files('debian/zookeeper.jar', 'debian/zookeeper-jute.jar', 'jre/bin/java');
    const found = locateZooKeeper({
      env: env({ JAVA_HOME: at('jre') }),
      debianJavaDir: at('debian'),
    });
    expect(found.java).toBe(at('jdk/bin/java'));
    executable('jre2/bin/java');
    const second = locateZooKeeper({
      env: env({ JAVA_HOME: at('jre2') }),
      debianJavaDir: at('debian'),
    });
    expect(second.java).toBe(at('jre2/bin/java'));
  });

  it('says how to install ZooKeeper when there is none', () => {
    let error: unknown;
    try {
      locateZooKeeper({ env: env(), debianJavaDir: noDebian() });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ZooKeeperNotFoundError);
    const notFound = error as ZooKeeperNotFoundError;
    expect(notFound.name).toBe('ZooKeeperNotFoundError');
    expect(notFound.message).toContain('apt-get install -y zookeeper');
    expect(notFound.message).toContain('ZOOKEEPER_HOME');
    expect(notFound.searched).toEqual([
      'ZOOKEEPER_HOME (not set)',
      join(noDebian(), 'zookeeper.jar'),
      'zkServer.sh on PATH',
    ]);
  });

  it('says so when ZooKeeper is there but java is not', () => {
    files('debian/zookeeper.jar', 'debian/zookeeper-jute.jar');
    expect(() =>
      locateZooKeeper({ env: { PATH: at('empty') }, debianJavaDir: at('debian') }),
    ).toThrow(/no Java runtime[\s\S]*apt-get install -y zookeeper/);
  });
});
