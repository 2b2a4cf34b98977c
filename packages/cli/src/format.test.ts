import { describe, expect, it } from 'vitest';
import {
  colours,
  fitWidth,
  formatData,
  formatDuration,
  formatSession,
  visibleLength,
} from './format';

describe('formatting', () => {
  it('durations: short and exact enough to see them tick', () => {
    expect(formatDuration(-5)).toBe('0ms');
    expect(formatDuration(850)).toBe('850ms');
    expect(formatDuration(12_345)).toBe('12.3s');
    expect(formatDuration(245_000)).toBe('4m05s');
    expect(formatDuration(7_380_000)).toBe('2h03m');
    expect(formatDuration(273_600_000)).toBe('3d04h');
  });

  it('sessions as ZooKeeper logs them, data without control characters', () => {
    expect(formatSession('100008809950001')).toBe('0x100008809950001');
    expect(formatData('web-1:4242')).toBe('web-1:4242');
    expect(formatData('')).toBe('-');
    expect(formatData('a\u001b[2Jb\nc')).toBe('a?[2Jb?c');
    expect(formatData('x'.repeat(40), 10)).toBe(`${'x'.repeat(9)}…`);
  });

  it('fits coloured text to a width, escapes taking none', () => {
    const text = `${colours.red('abcdef')}ghij`;
    expect(visibleLength(text)).toBe(10);
    expect(fitWidth(text, 20)).toBe(text);
    const cut = fitWidth(text, 5);
    expect(visibleLength(cut)).toBe(5);
    expect(cut).toBe('\u001b[31mabcd…\u001b[0m');
  });
});
