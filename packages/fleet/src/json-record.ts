/**
 * Reading back a record the fleet wrote as JSON in a znode (a poison report, a stored set's
 * claim): the fields it must have, each with its type; anything else is not that record.
 */

type FieldType = 'string' | 'number' | 'boolean';
type Typed<F extends Record<string, FieldType>> = {
  readonly [K in keyof F]: F[K] extends 'string'
    ? string
    : F[K] extends 'number'
      ? number
      : boolean;
};

/**
 * The record in `data` with exactly the `fields` asked (others dropped), when it is JSON with
 * each of them of its type; undefined otherwise.
 *
 * ## Example
 * ```ts
 * console.log(readRecord(Buffer.from('{"member":"a","n":1}'), { member: 'string', n: 'number' }));
 * // Output: { member: 'a', n: 1 }
 * ```
 */
export function readRecord<F extends Record<string, FieldType>>(
  data: Buffer,
  fields: F,
): Typed<F> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(data.toString('utf8'));
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const record: Record<string, unknown> = {};
  for (const [name, type] of Object.entries(fields)) {
    const field = (value as Record<string, unknown>)[name];
    if (typeof field !== type) return undefined;
    record[name] = field;
  }
  return record as Typed<F>;
}
