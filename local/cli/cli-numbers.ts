/**
 * Numeric command-line flags, one implementation for every command: a flag takes decimal digits
 * only (`64`, `-1` where a range allows it; `0x40`, `1e3`, `64.0`, ` 64`, `` are refused, where
 * `Number()` alone would read them), and its range is stated in its help and in its error. The
 * range of a run option or survey option comes from the zod schema that validates it
 * (shared/config.ts, shared/survey/options.ts), so the CLI cannot drift from the API.
 *
 * A token count (a schema field named `…Tokens`: `--chunk-tokens`, `--reasoner-budget`,
 * `--sync-budget`) also takes the suffixes of the eval's `--lengths`, through the same parser
 * (shared/token-count.ts): `8k` = 8,000, `1.5M` = 1,500,000.
 */
import { InvalidArgumentError } from 'commander';
import type { z } from 'zod';
import { parseTokenCount, TOKEN_COUNT_FORMS } from '../../shared/token-count';

/** An inclusive range; `max` undefined = no upper bound. */
export interface NumberRange {
  min: number;
  max?: number;
  /** Whole numbers only (default true). */
  integer?: boolean;
  /** A count of tokens: also `8k`, `1.5M` (shared/token-count.ts). */
  tokens?: boolean;
}

/** `64-200000`, `>= 1`, as help and errors show a range. */
export function rangeText(range: NumberRange): string {
  return range.max === undefined ? `>= ${range.min}` : `${range.min}-${range.max}`;
}

const INTEGER = /^-?\d+$/;
const DECIMAL = /^-?\d+(?:\.\d+)?$/;

/**
 * A commander argument parser for a numeric flag.
 * @param flag the flag as typed (`--chunk-tokens`), for the error.
 * @returns the parser: the number, or an InvalidArgumentError (commander prints it and exits 1;
 *   the commands turn it into a usage error, exit 2) such as
 *   `--chunk-tokens must be a whole number 64-200000 (decimal digits only; got "0x40")` for a value
 *   in another form, and `--rounds must be a whole number 1-10; got 11, above 10` for one out of range.
 */
export function numberFlag(flag: string, range: NumberRange): (value: string) => number {
  const integer = range.integer ?? true;
  const kind = range.tokens ? 'a whole number of tokens' : integer ? 'a whole number' : 'a number';
  const forms = range.tokens ? TOKEN_COUNT_FORMS : 'decimal digits only';
  return (value: string): number => {
    const parsed = range.tokens ? (parseTokenCount(value) ?? Number.NaN) : (integer ? INTEGER : DECIMAL).test(value) ? Number(value) : Number.NaN;
    // A value in the right form but out of range is told the range only; a value in another form, the forms too.
    if (!Number.isFinite(parsed)) throw new InvalidArgumentError(`${flag} must be ${kind} ${rangeText(range)} (${forms}; got "${value}")`);
    if (parsed < range.min || (range.max !== undefined && parsed > range.max)) {
      throw new InvalidArgumentError(
        `${flag} must be ${kind} ${rangeText(range)}; got ${value}, ${parsed < range.min ? `below ${range.min}` : `above ${range.max}`}`,
      );
    }
    return parsed;
  };
}

/** Is a schema field a count of tokens? Units are in the names (shared/config.ts): `chunkTokens`, `syncBudgetTokens`. */
export const isTokenField = (field: string): boolean => field.endsWith('Tokens');

/** The zod number schema under a field, defaults and optionals unwrapped. */
function numberSchemaOf(schema: z.ZodObject, field: string): z.ZodNumber {
  let current = schema.shape[field] as unknown as { unwrap?: () => unknown; minValue?: number | null };
  while (current && current.minValue === undefined && typeof current.unwrap === 'function') current = current.unwrap() as typeof current;
  if (!current || current.minValue === undefined) throw new Error(`${field} is not a number field of the schema`);
  return current as unknown as z.ZodNumber;
}

/**
 * The range of a numeric field of an options schema (min, max, whole numbers or not), as it validates.
 * @throws Error when the field is not a number with both bounds (a programming error).
 */
export function schemaRange(schema: z.ZodObject, field: string): Required<NumberRange> {
  const number = numberSchemaOf(schema, field);
  const { minValue, maxValue, isInt } = number;
  if (minValue === null || maxValue === null || !Number.isFinite(minValue) || !Number.isFinite(maxValue)) {
    throw new Error(`${field} needs a min and a max in its schema`);
  }
  return { min: minValue, max: maxValue, integer: isInt, tokens: isInt && isTokenField(field) };
}

/** {@link numberFlag} with the range of a schema field ({@link schemaRange}). */
export function schemaFlag(flag: string, schema: z.ZodObject, field: string): (value: string) => number {
  return numberFlag(flag, schemaRange(schema, field));
}

/**
 * The default of a schema field (what the schema gives when the field is absent), so a flag's
 * default is the one the API and job files get.
 * @throws Error when the field has no default (a programming error).
 */
export function schemaDefault(schema: z.ZodObject, field: string): number {
  const value = (schema.shape[field] as z.ZodType).parse(undefined);
  if (typeof value !== 'number') throw new Error(`${field} has no numeric default in its schema`);
  return value;
}

/** A numeric option's help: `<help> (<range>)`, or `<help> (<range>; default <n>)` when commander does not print the default itself. */
export function schemaHelp(help: string, schema: z.ZodObject, field: string, options: { showDefault?: boolean } = {}): string {
  const { tokens, ...bounds } = schemaRange(schema, field);
  const range = `${rangeText(bounds)}${tokens ? '; 8k = 8,000, 1.5M = 1,500,000' : ''}`;
  return options.showDefault ? `${help} (${range}; default ${schemaDefault(schema, field)})` : `${help} (${range})`;
}
