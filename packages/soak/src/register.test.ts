import { describe, expect, it } from 'vitest';
import { FencedRegister } from './register';

describe('FencedRegister', () => {
  it('accepts equal or higher tokens and refuses a lower one, per resource, logging each write', () => {
    const register = new FencedRegister();
    const write = (resource: string, token: number) =>
      register.write({ resource, token, holdId: `h${token}`, worker: 0, at: token });
    expect([
      write('/a', 5),
      write('/a', 5),
      write('/a', 7),
      write('/a', 6),
      write('/b', 1),
    ]).toEqual([true, true, true, false, true]);
    expect(register.log.map((entry) => entry.highestBefore)).toEqual([
      undefined,
      5,
      5,
      7,
      undefined,
    ]);
  });
});
