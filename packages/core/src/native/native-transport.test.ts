/**
 * `nativeTransport()` where the stock binding cannot run: it fails at once (before any client
 * exists) with a ZkError that says why and names the default transport. On Node 26 the binding
 * does not build; this file runs on every line (`test:lines`), the Node 26 case on Node 26.
 */
import { describe, expect, it } from 'vitest';
import { ZkError, ZkErrorCode } from '../errors/errors';
import { bindingUnavailable, nativeTransport } from './native-transport';

const major = Number(process.versions.node.split('.')[0]);
const dlopenFailed = Object.assign(new Error('Module did not self-register'), {
  code: 'ERR_DLOPEN_FAILED',
});

describe('nativeTransport() where the binding cannot run', () => {
  it.runIf(major >= 26)('throws at once on Node 26, naming the default transport', () => {
    let thrown: unknown;
    try {
      nativeTransport();
    } catch (error) {
      thrown = error;
    }
    expect(ZkError.isInstance(thrown)).toBe(true);
    const error = thrown as ZkError;
    expect(error.code).toBe(ZkErrorCode.SystemError);
    expect(error.message).toContain(
      `does not run on Node ${process.versions.node}: zookeeper 7.3, a NAN addon, builds on Node 22 and 24, not on Node 26`,
    );
    expect(error.message).toContain("the default transport (zkrx's own, in TypeScript");
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('says which line, which runtime, or what is missing', () => {
    expect(bindingUnavailable(dlopenFailed, { node: '26.12.1' })).toMatch(
      /^nativeTransport\(\): the zookeeper binding does not run on Node 26\.12\.1: .*not on Node 26; the default transport .* runs on every Node line\. Module did not self-register$/,
    );
    expect(bindingUnavailable(dlopenFailed, { node: '24.3.0', bun: '1.4.5' })).toContain(
      'does not run on Bun 1.4.5: it is a NAN addon, and Bun 1.4.5 loads Node-API addons only',
    );
    expect(bindingUnavailable(dlopenFailed, { node: '24.2.0', deno: '2.9.6' })).toContain(
      'does not run on Deno 2.9.6',
    );
    const missing = Object.assign(new Error("Cannot find module 'zookeeper/package.json'"), {
      code: 'MODULE_NOT_FOUND',
    });
    expect(bindingUnavailable(missing, { node: '24.22.3' })).toContain(
      'the zookeeper binding is not installed (npm install zookeeper',
    );
    expect(bindingUnavailable(dlopenFailed, { node: '22.23.5' })).toContain(
      'cannot load the zookeeper binding on Node 22.23.5 (it is compiled for the Node that installed it: npm rebuild zookeeper)',
    );
    for (const versions of [
      { node: '26.12.1' },
      { node: '22.23.5' },
      { node: '24.0.0', bun: '1' },
    ]) {
      expect(bindingUnavailable(dlopenFailed, versions)).toContain('the default transport');
    }
  });
});
