/**
 * The logger zkrx writes to (the C client's own log lines included): silent unless configured.
 */

/** Anything with these methods works, `console` included. */
export interface Logger {
  debug?(message: string, context?: Record<string, unknown>): void;
  info?(message: string, context?: Record<string, unknown>): void;
  warn?(message: string, context?: Record<string, unknown>): void;
  error?(message: string, context?: Record<string, unknown>): void;
}

export type LogLevel = 'silent' | 'error' | 'warn' | 'info' | 'debug';

const rank: Record<LogLevel, number> = { silent: 0, error: 1, warn: 2, info: 3, debug: 4 };

/** Numeric rank of a level (0 = silent ... 4 = debug), as the C client counts them. */
export function levelRank(level: LogLevel): number {
  return rank[level];
}

/** A logger that writes at `level` and above to `target`. */
export function leveledLogger(target: Logger | undefined, level: LogLevel): Required<Logger> {
  const threshold = target ? rank[level] : 0;
  const method = (name: Exclude<LogLevel, 'silent'>) => {
    const write = target?.[name];
    if (!write || rank[name] > threshold) return () => {};
    return (message: string, context?: Record<string, unknown>) => {
      try {
        if (context === undefined) write.call(target, message);
        else write.call(target, message, context);
      } catch {
        // A throwing logger must not break the client.
      }
    };
  };
  return {
    debug: method('debug'),
    info: method('info'),
    warn: method('warn'),
    error: method('error'),
  };
}

/** The level of one C client log line (`... ZOO_WARN@function@line: ...`). */
export function nativeLineLevel(line: string): Exclude<LogLevel, 'silent'> {
  if (line.includes('ZOO_ERROR')) return 'error';
  if (line.includes('ZOO_WARN')) return 'warn';
  if (line.includes('ZOO_INFO')) return 'info';
  if (line.includes('ZOO_DEBUG')) return 'debug';
  return 'warn';
}
