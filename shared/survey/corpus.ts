/**
 * Survey corpora: papers as JSON Lines or a JSON array of records
 * `{id | arxiv_id, title, abstract, authors, year, link?, categories?}`, and text / Markdown files,
 * each file one source. Pure functions over already-read files (local/ reads the disk, the Lambda
 * reads S3).
 */
import { InvalidInputError } from '../errors';
import type { SurveySource } from './types';

/** One corpus file: its id (relative path or S3 key) and its text (UTF-8 decoded, or read by shared/readers/). */
export interface CorpusFileText {
  id: string;
  text: string;
  /** The title the reader found (an HTML `<title>`, a PDF Title, the first heading); default from the text. */
  title?: string;
}

/** Sources of a corpus, and what was skipped and why. */
export interface ParsedCorpus {
  sources: SurveySource[];
  skipped: Array<{ where: string; reason: string }>;
}

/** Files parsed as paper records: `.jsonl`, `.ndjson`, `.json`. Anything else is one text source. */
export const RECORD_FILE = /\.(jsonl|ndjson|json)$/i;

/**
 * Parse corpus files into sources, in file order then record order.
 * - a paper record needs an id (`id` or `arxiv_id`, string or number), a title and an abstract
 *   (non-empty strings); records lacking one are skipped with a reason; a repeated id is skipped;
 * - `authors` may be a string or a list of strings; `year` a string or number; `categories` a list
 *   of strings or a string holding a list (`"['a', 'b']"`);
 * - a text / Markdown file is one source: id = the file id, title = its first Markdown heading, else
 *   the file name without extension.
 * @throws InvalidInputError when a `.json` file is not valid JSON or not an array of records.
 */
export function parseSurveyCorpus(files: CorpusFileText[]): ParsedCorpus {
  const sources: SurveySource[] = [];
  const skipped: ParsedCorpus['skipped'] = [];
  const ids = new Set<string>();
  const add = (source: SurveySource, where: string): void => {
    if (ids.has(source.id)) {
      skipped.push({ where, reason: `duplicate id ${source.id}` });
      return;
    }
    ids.add(source.id);
    sources.push(source);
  };
  for (const file of files) {
    const text = file.text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
    if (!RECORD_FILE.test(file.id)) {
      if (text.trim() === '') skipped.push({ where: file.id, reason: 'empty file' });
      else add({ id: file.id, title: file.title ?? titleOfText(file.id, text), text }, file.id);
      continue;
    }
    for (const { where, record } of records(file.id, text, skipped)) {
      const parsed = paperOf(record);
      if (typeof parsed === 'string') skipped.push({ where, reason: parsed });
      else add(parsed, where);
    }
  }
  return { sources, skipped };
}

function records(fileId: string, text: string, skipped: ParsedCorpus['skipped']): Array<{ where: string; record: unknown }> {
  const trimmed = text.trim();
  if (/\.json$/i.test(fileId) && trimmed.startsWith('[')) {
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch (error) {
      throw new InvalidInputError(`${fileId}: not valid JSON (${(error as Error).message})`, { cause: error });
    }
    if (!Array.isArray(value)) throw new InvalidInputError(`${fileId}: expected a JSON array of paper records`);
    return value.map((record, i) => ({ where: `${fileId}[${i}]`, record }));
  }
  const out: Array<{ where: string; record: unknown }> = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      out.push({ where: `${fileId}:${i + 1}`, record: JSON.parse(line) });
    } catch {
      skipped.push({ where: `${fileId}:${i + 1}`, reason: 'not a JSON object' });
    }
  });
  return out;
}

const str = (value: unknown): string | undefined => {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
};

/** A paper record as a source, or the reason it is skipped. */
function paperOf(record: unknown): SurveySource | string {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return 'not a JSON object';
  const r = record as Record<string, unknown>;
  const id = str(r.id) ?? str(r.arxiv_id) ?? derivedId(r);
  if (id === undefined) return 'no id or arxiv_id, and no first author, year and title to derive one from';
  if (/[\s[\]]/.test(id)) return `id ${JSON.stringify(id)} contains white space or brackets (it must be citable as [id])`;
  const title = str(r.title);
  const abstract = str(r.abstract);
  if (title === undefined) return `${id}: no title`;
  if (abstract === undefined) return `${id}: no abstract`;
  const authors = Array.isArray(r.authors) ? r.authors.filter((a): a is string => typeof a === 'string').join(', ') : str(r.authors);
  const categories = categoriesOf(r.categories);
  const cleanTitle = title.replace(/\s+/g, ' ');
  return {
    id,
    title: cleanTitle,
    // The title is part of what seekers read: it names the method the abstract describes.
    text: `${cleanTitle}.\n\n${abstract.replace(/\\footnote\{[^}]*\}?/g, '').replace(/[ \t]+/g, ' ')}`,
    ...(authors !== undefined && authors !== '' && { authors }),
    ...(str(r.year) !== undefined && { year: str(r.year) }),
    ...(str(r.link) !== undefined && { link: str(r.link) }),
    ...(categories.length > 0 && { categories }),
  };
}

/**
 * A citation key for a record without id (BibTeX style): the first author's surname, the year and
 * the first word of the title of 4+ letters, lower case (`kelly2023there`). Repeats are skipped as
 * duplicates by the caller. Undefined when a part is missing.
 */
function derivedId(r: Record<string, unknown>): string | undefined {
  const authors = Array.isArray(r.authors) ? r.authors.find((a): a is string => typeof a === 'string') : str(r.authors);
  const year = str(r.year);
  const title = str(r.title);
  if (authors === undefined || year === undefined || title === undefined) return undefined;
  // "Surname, Given and …" (BibTeX) or "Given Surname, …".
  const first = authors.split(/\s+and\s+|;/)[0].trim();
  const surname = first.includes(',') ? first.split(',')[0] : (first.split(/\s+/).pop() ?? '');
  const word = /\p{L}{4,}/u.exec(title)?.[0] ?? '';
  const id = `${surname}${year}${word}`
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]/g, '');
  return id.length > 4 ? id : undefined;
}

/** Category labels from a list, or a string holding a list (`"['a', 'b']"`), deduplicated in order. */
function categoriesOf(value: unknown): string[] {
  let list: unknown[] = [];
  if (Array.isArray(value)) list = value;
  else if (typeof value === 'string')
    list = value
      .replace(/^\s*\[|\]\s*$/g, '')
      .split(',')
      .map((s) => s.trim().replace(/^['"]|['"]$/g, ''));
  return [...new Set(list.filter((c): c is string => typeof c === 'string' && c.trim() !== '').map((c) => c.trim()))];
}

/** The first Markdown heading of a text, else the file name without directory and extension. */
function titleOfText(id: string, text: string): string {
  const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/m.exec(text);
  if (heading) return heading[1];
  const base = id.split('/').pop() ?? id;
  return base.replace(/\.[^.]+$/, '');
}
