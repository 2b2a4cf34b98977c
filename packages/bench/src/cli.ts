/**
 * `node dist/cli.js`: the bench's command line (see `--help`). Exits with the run's status
 * rather than wait for whatever a failed run left behind.
 */
import { main } from './main';

const code = await main(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
process.exit(code);
