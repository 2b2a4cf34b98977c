// What the README snippets use and leave to the application: its own services.
declare const payments: {
  charge(
    order: string,
    options: { signal: AbortSignal; fencingToken: number },
  ): Promise<{ order: string }>;
};
declare function rebuildReports(options: { signal: AbortSignal }): Promise<{ rebuilt: number }>;
