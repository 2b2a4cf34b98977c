import { describe, expect, it } from 'vitest';
import { DEFAULT_SOAK_OPTIONS, parseSoakArguments } from './options';

describe('parseSoakArguments', () => {
  it('gives the bounded default run with no arguments', () => {
    expect(parseSoakArguments([])).toEqual(DEFAULT_SOAK_OPTIONS);
    expect(DEFAULT_SOAK_OPTIONS.workers).toBe(8);
  });

  it('reads modes, seed, fleet and timings', () => {
    expect(
      parseSoakArguments([
        '--',
        '--modes',
        'mutex,broken',
        '--seed',
        '12',
        '--workers',
        '4',
        '--session-timeout',
        '2000',
        '--duration',
        '5',
        '--json',
        'out.json',
        '--history',
        'history.json',
        '--verbose',
      ]),
    ).toMatchObject({
      modes: ['mutex', 'broken'],
      seed: 12,
      workers: 4,
      sessionTimeoutMs: 2_000,
      faultPhaseMs: 5_000,
      json: 'out.json',
      history: 'history.json',
      verbose: true,
    });
  });

  it('says what is wrong', () => {
    expect(parseSoakArguments(['--modes', 'mutex,nope'])).toEqual({
      error: '--modes: unknown nope',
    });
    expect(parseSoakArguments(['--workers', '1'])).toEqual({
      error: '--workers needs a number >= 2, got 1',
    });
    expect(parseSoakArguments(['--frobnicate'])).toEqual({
      error: 'unknown argument --frobnicate',
    });
    expect(parseSoakArguments(['--history'])).toEqual({ error: '--history needs a file' });
    expect(parseSoakArguments(['--help'])).toEqual({ help: true });
  });
});
