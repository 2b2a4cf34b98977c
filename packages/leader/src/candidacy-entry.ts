/**
 * @zkrx/leader/candidacy — EXPERIMENTAL: the candidacy behind `joinElection`, `leadership` and
 * `whileLeader` — standing, terms, runs kept in view, leader-only writes, standing again, leaving —
 * over any source of terms (an `ElectionLayout`'s lease observable): for an adapter's stand-in
 * (`@zkrx/nestjs/testing` elects in memory with it) or an election on a recipe of your own. It
 * may change in any minor release; `joinElection`, `leadership` and `whileLeader` are the stable
 * surface.
 */

export { Candidacy } from './candidacy';
export type { ResolvedCandidate } from './candidate-options';
export type { ElectionLayout } from './election-recipes';
