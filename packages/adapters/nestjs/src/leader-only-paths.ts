/**
 * Which election paths a class's @LeaderOnly methods use, kept on the class so the application
 * joins those elections when it boots.
 */

const paths = new WeakMap<Function, Set<string>>();

/** Records that `type` has a @LeaderOnly method on `path`. */
export function addLeaderOnlyPath(type: Function, path: string): void {
  let own = paths.get(type);
  if (!own) {
    own = new Set();
    paths.set(type, own);
  }
  own.add(path);
}

/** The @LeaderOnly paths of `type` and the classes it extends. */
export function leaderOnlyPathsOf(type: Function): string[] {
  const found = new Set<string>();
  for (let current: unknown = type; typeof current === 'function'; ) {
    for (const path of paths.get(current) ?? []) found.add(path);
    current = Object.getPrototypeOf(current);
  }
  return [...found];
}
