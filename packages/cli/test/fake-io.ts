/**
 * A CliIo for in-process tests: captures what a command writes, answers its prompt with a given
 * line, and says whether its streams are terminals.
 */
import { EventEmitter } from 'node:events';
import type { CliIo, Input } from '../src/io';

export interface FakeIo extends CliIo {
  /** What was written to stdout / stderr. */
  out(): string;
  err(): string;
  /** Each line written to stdout so far, parsed as JSON (what `--json` prints). */
  jsonLines(): ReturnType<typeof JSON.parse>[];
  /** Ends the run as Ctrl-C would. */
  interrupt(): void;
}

export function fakeIo(
  options: {
    env?: Record<string, string>;
    /** stdin is a terminal, and this line is typed when the command reads it. */
    answer?: string | (() => Promise<string>);
    stdoutTTY?: boolean;
  } = {},
): FakeIo {
  let out = '';
  let err = '';
  const interrupts = new Set<() => void>();
  const events = new EventEmitter();
  const stdin: Input = {
    isTTY: options.answer !== undefined,
    setRawMode: () => {},
    on: (event: string, listener: (...args: unknown[]) => void) => events.on(event, listener),
    off: (event: string, listener: (...args: unknown[]) => void) => events.off(event, listener),
    resume: () => {
      const { answer } = options;
      if (answer === undefined) return;
      void (typeof answer === 'string' ? Promise.resolve(answer) : answer()).then((line) =>
        events.emit('data', `${line}\n`),
      );
    },
    pause: () => {},
  } as Input;
  return {
    stdout: {
      write: (text: string) => {
        out += text;
      },
      isTTY: options.stdoutTTY ?? false,
      columns: 200,
      rows: 50,
    },
    stderr: {
      write: (text: string) => {
        err += text;
      },
    },
    stdin,
    env: options.env ?? {},
    onInterrupt(listener) {
      interrupts.add(listener);
      return () => interrupts.delete(listener);
    },
    out: () => out,
    err: () => err,
    jsonLines: () =>
      out
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line)),
    interrupt: () => {
      for (const listener of interrupts) listener();
    },
  };
}
