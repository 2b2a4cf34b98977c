#!/usr/bin/env node
/**
 * The `zkrx` executable: runs the command line and exits with its code.
 */
import { run } from './run';

run(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`zkrx: ${String(error)}\n`);
    process.exitCode = 1;
  },
);
