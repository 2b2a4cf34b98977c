/**
 * Prints the class path Curator runs with (`ZKRX_CURATOR_CLASSPATH`, else Debian's jars of
 * @zkrx/interop's `CURATOR_JARS`), the one the bench's Java floor and the interop peers use, for
 * scripts/side-by-side.sh.
 *
 *   node packages/bench/dist/tools/curator-classpath.js     (after `pnpm build`)
 */
import { interopLocations } from '@zkrx/interop';

process.stdout.write(`${interopLocations().curatorClasspath}\n`);
