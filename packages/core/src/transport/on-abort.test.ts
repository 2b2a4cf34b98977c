/**
 * `onAbort`: one listener on the signal however many calls share it, in the order added, once;
 * removed ones skipped; an error reported without stopping the others.
 */
import { describe, expect, it } from 'vitest';
import { onAbort } from './on-abort';

describe('onAbort', () => {
  it('runs each listener once, in order (added again: moved last), skipping removed ones', () => {
    const controller = new AbortController();
    const seen: string[] = [];
    const added = (name: string) => onAbort(controller.signal, () => seen.push(name));
    added('a');
    const b = () => seen.push('b');
    onAbort(controller.signal, b);
    const stopC = added('c');
    onAbort(controller.signal, b); // moved behind c
    stopC();
    controller.abort();
    controller.abort();
    expect(seen).toEqual(['a', 'b']);
    // Added once aborted: never runs (as addEventListener).
    added('late');
    expect(seen).toEqual(['a', 'b']);
  });

  it('a listener removed by an earlier one during the abort does not run', () => {
    const controller = new AbortController();
    const seen: string[] = [];
    let stopSecond = () => {};
    onAbort(controller.signal, () => {
      seen.push('first');
      stopSecond();
    });
    stopSecond = onAbort(controller.signal, () => seen.push('second'));
    controller.abort();
    expect(seen).toEqual(['first']);
  });

  it('puts one listener on a signal shared by a thousand waiters: no leak warning', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const controller = new AbortController();
      let ran = 0;
      const stops = Array.from({ length: 1_000 }, () =>
        onAbort(controller.signal, () => {
          ran += 1;
        }),
      );
      for (const stop of stops.slice(0, 500)) stop();
      controller.abort();
      expect(ran).toBe(500);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning')).toEqual(
        [],
      );
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('reports an error a listener throws, and runs the others', async () => {
    const controller = new AbortController();
    const seen: string[] = [];
    const uncaught: unknown[] = [];
    const listeners = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    const record = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', record);
    try {
      onAbort(controller.signal, () => {
        throw new Error('boom');
      });
      onAbort(controller.signal, () => seen.push('after'));
      controller.abort();
      expect(seen).toEqual(['after']);
      await new Promise((resolve) => setImmediate(resolve));
      expect(uncaught).toMatchObject([{ message: 'boom' }]);
    } finally {
      process.off('uncaughtException', record);
      for (const listener of listeners) process.on('uncaughtException', listener);
    }
  });
});
