/**
 * How the `zkrx` command writes durations, sessions, times and node data for a person: short,
 * aligned, and never a raw control character from a node's data.
 */

/** `850ms`, `12.3s`, `4m05s`, `2h03m`, `3d04h`. */
export function formatDuration(ms: number): string {
  const value = Math.max(0, ms);
  if (value < 1_000) return `${Math.floor(value)}ms`;
  if (value < 60_000) return `${(Math.floor(value / 100) / 10).toFixed(1)}s`;
  const seconds = Math.floor(value / 1_000);
  if (seconds < 3_600) return `${Math.floor(seconds / 60)}m${pad(seconds % 60)}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 1_440) return `${Math.floor(minutes / 60)}h${pad(minutes % 60)}m`;
  const hours = Math.floor(minutes / 60);
  return `${Math.floor(hours / 24)}d${pad(hours % 24)}h`;
}

function pad(value: number): string {
  return String(value).padStart(2, '0');
}

/** A session id as ZooKeeper's logs print it: `0x` + hex. */
export function formatSession(sessionId: string): string {
  return `0x${sessionId}`;
}

/** `HH:MM:SS`, local time. */
export function formatClock(time: number): string {
  const date = new Date(time);
  return [date.getHours(), date.getMinutes(), date.getSeconds()].map(pad).join(':');
}

/** Node data for one cell: control characters replaced, at most `max` characters. */
export function formatData(data: string, max = 32): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to replace them
  const printable = data.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  if (printable.length === 0) return '-';
  return printable.length > max ? `${printable.slice(0, max - 1)}…` : printable;
}

/** Terminal colours, or none. */
export interface Paint {
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  yellow(text: string): string;
  green(text: string): string;
  /** Red background: what must catch the eye (a lost lease). */
  alarm(text: string): string;
}

const ansi = (open: string, close: string) => (text: string) =>
  `\u001b[${open}m${text}\u001b[${close}m`;

export const colours: Paint = {
  bold: ansi('1', '22'),
  dim: ansi('2', '22'),
  red: ansi('31', '39'),
  yellow: ansi('33', '39'),
  green: ansi('32', '39'),
  alarm: ansi('1;97;41', '0'),
};

const same = (text: string) => text;
export const noColours: Paint = {
  bold: same,
  dim: same,
  red: same,
  yellow: same,
  green: same,
  alarm: same,
};

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escapes
const escapes = /\u001b\[[0-9;?]*[A-Za-z]/g;

/** The width of `text` on a terminal (escapes take none). */
export function visibleLength(text: string): number {
  return text.replace(escapes, '').length;
}

/** Cuts `text` to `width` visible characters, keeping its escapes (then resets them). */
export function fitWidth(text: string, width: number): string {
  if (visibleLength(text) <= width) return text;
  let out = '';
  let visible = 0;
  for (let index = 0; index < text.length; ) {
    escapes.lastIndex = index;
    const match = escapes.exec(text);
    if (match && match.index === index) {
      out += match[0];
      index += match[0].length;
      continue;
    }
    if (visible >= width - 1) break;
    out += text[index];
    visible += 1;
    index += 1;
  }
  return `${out}…\u001b[0m`;
}

/** Pads `text` to `width` visible characters. */
function padEnd(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - visibleLength(text)));
}

/**
 * Aligned columns: returns the line of a row of cells, indented two spaces, each cell padded to
 * its column's widest among `header` and `rows`, two spaces apart, the last cell unpadded.
 */
export function alignedColumns(
  header: readonly string[],
  rows: readonly (readonly string[])[],
): (cells: readonly string[]) => string {
  const widths = header.map((name, column) =>
    Math.max(name.length, ...rows.map((cells) => visibleLength(cells[column] ?? ''))),
  );
  return (cells) =>
    `  ${cells.map((cell, column) => (column === cells.length - 1 ? cell : padEnd(cell, widths[column] as number))).join('  ')}`;
}
