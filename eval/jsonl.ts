/**
 * Lenient JSON Lines parsing for evaluation data: a malformed line is reported (with its 1-based
 * line number) and skipped, never thrown and never silent. Blank lines are ignored.
 */
import { graphemeBoundary } from '../shared/unicode';

/** A non-fatal problem found while reading a data file. */
export interface DataWarning {
  /** The file (path as given by the caller). */
  file: string;
  /** 1-based line number for JSON Lines files; absent for whole-file JSON records. */
  line?: number;
  /** Index of the record in a JSON array file (0-based), when the problem is one record. */
  record?: number;
  /** What is wrong and what was done ("skipped"). */
  message: string;
}

/** Render a warning as one line, e.g. `preds.jsonl:189: invalid JSON (…); line skipped`. */
export function formatWarning(w: DataWarning): string {
  const where = w.line !== undefined ? `${w.file}:${w.line}` : w.record !== undefined ? `${w.file}[${w.record}]` : w.file;
  return `${where}: ${w.message}`;
}

/** One parsed line with its 1-based number. */
export interface JsonLine {
  line: number;
  value: unknown;
}

/**
 * Parse JSON Lines text. Lines that are not valid JSON are skipped with a warning naming the line.
 * @param text the whole file (UTF-8 decoded); "\r\n" line ends accepted.
 * @param file the name used in warnings.
 */
export function parseJsonLines(text: string, file: string): { lines: JsonLine[]; warnings: DataWarning[] } {
  const lines: JsonLine[] = [];
  const warnings: DataWarning[] = [];
  const raw = text.split('\n');
  for (let i = 0; i < raw.length; i++) {
    const source = raw[i].replace(/\r$/, '');
    if (source.trim() === '') continue;
    try {
      lines.push({ line: i + 1, value: JSON.parse(source) as unknown });
    } catch (error) {
      const preview = source.length > 60 ? `${source.slice(0, graphemeBoundary(source, 60, 'before'))}…` : source;
      warnings.push({ file, line: i + 1, message: `invalid JSON (${(error as Error).message}); line skipped: ${preview}` });
    }
  }
  return { lines, warnings };
}

/** True for a plain JSON object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A string, or a list of strings (other list members dropped); undefined for anything else. */
export function stringList(value: unknown): string[] | undefined {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) {
    const out = value.filter((v): v is string => typeof v === 'string');
    return out.length === value.length ? out : undefined;
  }
  return undefined;
}
