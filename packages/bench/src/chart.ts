/**
 * The SVG chart of a matrix run, drawn by hand: one row per result, ops/s and p50 latency as
 * horizontal bars on log scales (the values span four decades).
 */
import type { ResultLine } from './single-run';

const WIDTH = 980;
const LABEL = 230;
const GAP = 40;
const PANEL = (WIDTH - LABEL - GAP - 20) / 2;
const ROW = 22;
const CAPTION_LINE = 14;
const HEAD = 34;

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

interface LogScale {
  readonly low: number;
  readonly high: number;
  x(value: number): number;
}

function logScale(values: readonly number[]): LogScale {
  const positive = values.filter((value) => value > 0);
  const low = 10 ** Math.floor(Math.log10(Math.min(...positive, 1)));
  const high = 10 ** Math.ceil(Math.log10(Math.max(...positive, 10)));
  const span = Math.log10(high) - Math.log10(low);
  return {
    low,
    high,
    x: (value) => (Math.max(0, Math.log10(Math.max(value, low)) - Math.log10(low)) / span) * PANEL,
  };
}

function formatValue(value: number): string {
  if (value >= 100) return String(Math.round(value));
  if (value >= 1) return value.toFixed(1);
  return value.toPrecision(2);
}

function panel(
  top: number,
  lines: readonly ResultLine[],
  key: 'ops_per_s' | 'p50_ms',
  left: number,
  title: string,
  color: string,
): string[] {
  const values = lines.map((line) => Number(line[key] ?? 0));
  const scale = logScale(values);
  const bottom = top + lines.length * ROW;
  const out = [`<text x="${left}" y="${top - 30}" class="title">${escapeXml(title)}</text>`];
  for (let decade = scale.low; decade <= scale.high; decade *= 10) {
    const x = left + scale.x(decade);
    out.push(
      `<line x1="${x.toFixed(1)}" y1="${top - 8}" x2="${x.toFixed(1)}" y2="${bottom}" class="grid"/>`,
      `<text x="${x.toFixed(1)}" y="${top - 12}" class="tick">${formatValue(decade)}</text>`,
    );
  }
  lines.forEach((line, index) => {
    const y = top + index * ROW;
    const value = values[index] as number;
    if (line.error !== undefined || !(value > 0)) {
      out.push(`<text x="${left + 4}" y="${y + 14}" class="failed">failed</text>`);
      return;
    }
    const width = Math.max(1, scale.x(value));
    out.push(
      `<rect x="${left}" y="${y + 4}" width="${width.toFixed(1)}" height="14" fill="${color}"/>`,
      `<text x="${(left + width + 4).toFixed(1)}" y="${y + 15}" class="value">${formatValue(value)}</text>`,
    );
  });
  return out;
}

/**
 * Draws ops/s and p50 per result as bars (log scales), one row per scenario and client count.
 *
 * @param lines The results, in table order.
 * @param caption Lines under the title (the command, the machine, the server).
 * @return The SVG document.
 */
export function chartSvg(lines: readonly ResultLine[], caption: readonly string[]): string {
  const top = HEAD + caption.length * CAPTION_LINE + 40;
  const height = top + lines.length * ROW + 20;
  const body: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, sans-serif" font-size="12">`,
    '<title>zkrx bench: ops/s and p50 latency per scenario and client count</title>',
    '<style>.title{font-weight:600;font-size:13px}.tick{fill:#666;font-size:10px;text-anchor:middle}.grid{stroke:#ddd}.label{text-anchor:end}.value{fill:#333;font-size:10px}.failed{fill:#b00;font-weight:600}.caption{fill:#666;font-size:10px}</style>',
    `<rect width="${WIDTH}" height="${height}" fill="#fff"/>`,
    `<text x="10" y="20" class="title">zkrx bench</text>`,
    ...caption.map(
      (text, index) =>
        `<text x="10" y="${HEAD + index * CAPTION_LINE}" class="caption">${escapeXml(text)}</text>`,
    ),
  ];
  lines.forEach((line, index) => {
    const y = top + index * ROW + 15;
    body.push(
      `<text x="${LABEL - 10}" y="${y}" class="label">${escapeXml(`${line.scenario} C=${line.clients}`)}</text>`,
    );
  });
  body.push(
    ...panel(top, lines, 'ops_per_s', LABEL, 'ops/s (log scale, longer is better)', '#4e79a7'),
  );
  body.push(
    ...panel(
      top,
      lines,
      'p50_ms',
      LABEL + PANEL + GAP,
      'p50 ms (log scale, shorter is better)',
      '#f28e2b',
    ),
  );
  body.push('</svg>');
  return `${body.join('\n')}\n`;
}
