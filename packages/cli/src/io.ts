/**
 * What a `zkrx` command reads and writes: the process's streams and environment, or a test's.
 */

/** A writable terminal or pipe. */
export interface Output {
  write(text: string): unknown;
  /** True on a terminal (then colours, and the live view). */
  readonly isTTY?: boolean;
  /** The terminal's width and height, when it is one. */
  readonly columns?: number;
  readonly rows?: number;
  on?(event: 'resize', listener: () => void): unknown;
  off?(event: 'resize', listener: () => void): unknown;
}

/** A readable terminal or pipe (answers to the confirmation prompt, keys in the live view). */
export interface Input {
  readonly isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
  on(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  off(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
  off(event: 'end', listener: () => void): unknown;
  resume(): unknown;
  pause(): unknown;
}

/** Where a command runs. */
export interface CliIo {
  readonly stdout: Output;
  readonly stderr: Output;
  readonly stdin: Input;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Resolves when the person asks to stop (Ctrl-C, SIGTERM); returns a function that stops listening. */
  onInterrupt(listener: () => void): () => void;
}

/** The process's own streams, environment and signals. */
export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    onInterrupt(listener) {
      process.on('SIGINT', listener);
      process.on('SIGTERM', listener);
      return () => {
        process.off('SIGINT', listener);
        process.off('SIGTERM', listener);
      };
    },
  };
}

/** Resolves at the first interrupt (Ctrl-C, SIGTERM) from now on; listens from this call. */
export function untilInterrupted(io: CliIo): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = io.onInterrupt(() => {
      stop();
      resolve();
    });
  });
}
