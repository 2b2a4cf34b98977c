/**
 * Checks of the options this package's functions take: a wrong type, value or unknown key is an
 * {@link InvalidOptionError} naming the option and what it expects, thrown before anything starts.
 */
import { InvalidOptionError } from './errors';

/** One option: what it expects (for the message), and whether a value is that. */
export interface OptionRule {
  readonly expected: string;
  readonly valid: (value: unknown) => boolean;
  /** A field of an object option that must be there. */
  readonly required?: boolean;
  /** For an object option: its own keys, checked the same way (unknown ones too). */
  readonly fields?: OptionRules;
}

/** The options a function takes (`required` makes a field of an object option mandatory). */
export type OptionRules = Readonly<Record<string, OptionRule>>;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** What a value is, in short, for a message. */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined || typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return Number.isNaN(value) ? 'NaN' : String(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'string') {
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value);
  }
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Uint8Array) return 'a Uint8Array';
  const name = (value as object).constructor?.name;
  return name && name !== 'Object' ? `a ${name}` : 'an object';
}

export const rule = {
  boolean: { expected: 'true or false', valid: (value) => typeof value === 'boolean' },
  string: {
    expected: 'a non-empty string',
    valid: (value) => typeof value === 'string' && value.length > 0,
  },
  positiveInteger: {
    expected: 'a positive integer',
    valid: (value) => Number.isInteger(value) && (value as number) > 0,
  },
  positiveNumber: {
    expected: 'a positive number (ms)',
    valid: (value) => typeof value === 'number' && Number.isFinite(value) && value > 0,
  },
  strings: {
    expected: 'an array of strings',
    valid: (value) => Array.isArray(value) && value.every((item) => typeof item === 'string'),
  },
  stringRecord: {
    expected: 'an object of string values ({ key: "value" })',
    valid: (value) =>
      isPlainObject(value) && Object.values(value).every((item) => typeof item === 'string'),
  },
  /** An integer port in [min, 65535]. */
  port: (min: 0 | 1): OptionRule => ({
    expected: `an integer port from ${min} to 65535`,
    valid: (value) =>
      Number.isInteger(value) && (value as number) >= min && (value as number) <= 65535,
  }),
  /** A PEM string (`-----BEGIN ...`). */
  pem: (what: string): OptionRule => ({
    expected: `a PEM ${what} (a string with -----BEGIN ...)`,
    valid: (value) => typeof value === 'string' && value.includes('-----BEGIN '),
  }),
  oneOf: (values: readonly string[]): OptionRule => ({
    expected: `one of ${values.map((value) => `'${value}'`).join(', ')}`,
    valid: (value) => typeof value === 'string' && values.includes(value),
  }),
  object: (expected: string, fields: OptionRules): OptionRule => ({
    expected,
    valid: isPlainObject,
    fields,
  }),
} satisfies Record<string, OptionRule | ((...args: never[]) => OptionRule)>;

/** The closest of `names` to `name`, when close enough to be a typo. */
function closest(name: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const candidate of names) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * Checks `options` against `rules`: the argument is an object (or undefined), every key is a
 * known option, every value that is not `undefined` fits its rule; object options are checked
 * field by field.
 *
 * @param functionName For the error: the function the options were given to.
 * @param options What the caller passed.
 * @param rules The options the function takes.
 * @param ignored Keys accepted and not checked (e.g. the other fields of an object passed back).
 * @throws InvalidOptionError naming the first bad option.
 */
export function checkOptions(
  functionName: string,
  options: unknown,
  rules: OptionRules,
  ignored: readonly string[] = [],
): void {
  if (options === undefined) return;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidOptionError(
      functionName,
      'options',
      'an object (or nothing)',
      describeValue(options),
    );
  }
  checkFields(functionName, options as Record<string, unknown>, rules, '', ignored);
}

function checkFields(
  functionName: string,
  value: Record<string, unknown>,
  rules: OptionRules,
  prefix: string,
  ignored: readonly string[],
): void {
  const names = Object.keys(rules);
  for (const key of Object.keys(value)) {
    if (Object.hasOwn(rules, key) || ignored.includes(key)) continue;
    const guess = closest(key, names);
    throw new InvalidOptionError(
      functionName,
      `${prefix}${key}`,
      `${guess ? `did you mean ${prefix}${guess}? ` : ''}${prefix ? `${prefix.slice(0, -1)} takes` : 'it takes'} ${names.join(', ')}`,
      describeValue(value[key]),
      true,
    );
  }
  for (const [key, option] of Object.entries(rules)) {
    const field = value[key];
    if (field === undefined) {
      if (!option.required) continue;
      throw new InvalidOptionError(functionName, `${prefix}${key}`, option.expected, 'nothing');
    }
    if (!option.valid(field)) {
      throw new InvalidOptionError(
        functionName,
        `${prefix}${key}`,
        option.expected,
        describeValue(field),
      );
    }
    if (option.fields) {
      checkFields(
        functionName,
        field as Record<string, unknown>,
        option.fields,
        `${prefix}${key}.`,
        [],
      );
    }
  }
}

/** An {@link InvalidOptionError} for a check that involves more than one option's type. */
export function badOption(
  functionName: string,
  option: string,
  expected: string,
  value: unknown,
): InvalidOptionError {
  return new InvalidOptionError(functionName, option, expected, describeValue(value));
}
