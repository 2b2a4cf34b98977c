import { describe, expect, it } from 'vitest';
import { toolArgs } from './tool-args';

describe('toolArgs', () => {
  const usage = 'usage: tool [--rounds 5] [--impl a,b] [--items 1,2] [--wait 1]';
  const defaults = { rounds: '5', impl: 'a,b', items: '1,2', wait: '1' };

  it('gives the defaults, and what the command line sets instead', () => {
    const args = toolArgs(usage, defaults, ['--rounds', '2', '--impl', 'b', '--wait', '0.5']);
    expect(args.count('rounds', 1)).toBe(2);
    expect(args.list('impl', ['a', 'b'] as const)).toEqual(['b']);
    expect(args.counts('items', 1)).toEqual([1, 2]);
    expect(args.seconds('wait')).toBe(0.5);
    expect(args.text('rounds')).toBe('2');
  });
});
