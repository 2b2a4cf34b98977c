/**
 * The bench's entry: one run against `--connect` (exactly one JSON line on stdout, as the peer
 * benches), or the matrix (an embedded server or `--connect`, with its peers and rounds, the
 * table at the end).
 */
import { writeFileSync } from 'node:fs';
import type { BenchIo } from './io';
import { runMatrix } from './matrix';
import { parseOptions, USAGE, UsageError } from './options';
import { runOne, runSettings } from './single-run';

/**
 * Runs the bench with a command line; resolves its exit status (0 ok, 1 error, 2 an exclusion
 * invariant was violated, 3 stalled).
 *
 * ## Example
 * ```ts
 * const code = await main(['--connect', '127.0.0.1:2181', '--scenario', 'floor-getchildren', '--ops', '100'], io);
 * // Output (stdout): {"impl":"zkrx","scenario":"floor-getchildren","clients":1,"ops":100,...}
 * ```
 */
export async function main(argv: readonly string[], io: BenchIo): Promise<number> {
  let options: ReturnType<typeof parseOptions>;
  try {
    options = parseOptions(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`Error: ${error.message}\n\n${USAGE}`);
    return 1;
  }
  if (options.help) {
    io.stdout(USAGE);
    return 0;
  }
  const [only, ...others] = options.scenarios;
  // One scenario against a server is one run (as run-peers.sh runs it), unless rounds or peers
  // were asked for: those are the matrix's.
  if (
    options.connect &&
    only &&
    others.length === 0 &&
    options.rounds === 1 &&
    options.peers === undefined
  ) {
    const outcome = await runOne(runSettings(options, only, options.connect), io);
    if (outcome.line) {
      const text = `${JSON.stringify(outcome.line)}\n`;
      io.stdout(text);
      if (options.json) writeFileSync(options.json, text);
    }
    return outcome.code;
  }
  return runMatrix(options, io);
}
