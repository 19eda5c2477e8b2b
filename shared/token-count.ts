/**
 * Token counts as people type them, one parser for every place that reads one: the CLI's token
 * options (`--chunk-tokens`, `--reasoner-budget`, `--sync-budget`, in flags, `EXTAGENTS_*` variables
 * and the defaults file) and the eval's target lengths (`--lengths 8k,128k,1M`).
 *
 * Suffixes are decimal, as the eval's lengths always were (and as token counts are quoted: "a 128k
 * context"): k = 1,000 and M = 1,000,000, either case; never 1,024. A plain count is decimal digits
 * only (`0x40`, `1e3`, `64.0`, ` 64` are refused); a fraction needs a suffix (`1.5k` = 1,500) and must
 * come out whole (`1.0005k` is refused).
 */

/** The multiplier of each suffix (lower-cased). */
export const TOKEN_SUFFIXES: Readonly<Record<string, number>> = { k: 1_000, m: 1_000_000 };

/** How help and errors describe the accepted forms. */
export const TOKEN_COUNT_FORMS = 'digits, or with a suffix k = 1,000 or M = 1,000,000: 8k, 1.5M';

const PLAIN = /^\d+$/;
const SUFFIXED = /^(\d+)(?:\.(\d+))?([kKmM])$/;

/**
 * Parse a token count: `8000`, `8k`, `1.5M`.
 * @returns the whole number of tokens, or undefined when `text` is not one (malformed, or a
 *   fraction that does not come out whole).
 */
export function parseTokenCount(text: string): number | undefined {
  if (PLAIN.test(text)) return Number(text);
  const match = SUFFIXED.exec(text);
  if (!match) return undefined;
  const [, whole, fraction = '', suffix] = match;
  // Integer arithmetic: the digits scaled by the multiplier, divided by the fraction's power of ten.
  const multiplier = TOKEN_SUFFIXES[suffix.toLowerCase()];
  const scale = 10 ** fraction.length;
  const scaled = Number(`${whole}${fraction}`) * multiplier;
  if (!Number.isSafeInteger(scaled) || scaled % scale !== 0) return undefined;
  return scaled / scale;
}
