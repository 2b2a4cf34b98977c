/**
 * Unit tests of uniqueRoot: shape of the path, uniqueness, and rejected prefixes.
 * No server involved.
 */
import { describe, expect, it } from 'vitest';
import { uniqueRoot } from './unique-root';

describe('uniqueRoot', () => {
  it('returns a one-segment path with the prefix and random hex', () => {
    expect(uniqueRoot()).toMatch(/^\/t-[0-9a-f]{12}$/);
    expect(uniqueRoot('lock')).toMatch(/^\/lock-[0-9a-f]{12}$/);
  });

  it('never repeats in practice', () => {
    const roots = new Set(Array.from({ length: 1000 }, () => uniqueRoot()));
    expect(roots.size).toBe(1000);
  });

  it('rejects prefixes that would make an invalid or nested path', () => {
    expect(() => uniqueRoot('a/b')).toThrow(/Invalid root prefix/);
    expect(() => uniqueRoot('')).toThrow(/Invalid root prefix/);
    expect(() => uniqueRoot('..')).toThrow(/Invalid root prefix/);
  });
});
