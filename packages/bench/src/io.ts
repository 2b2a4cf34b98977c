/** Where the bench writes: stdout gets results only, stderr everything else. */
export interface BenchIo {
  stdout(text: string): void;
  stderr(text: string): void;
}
