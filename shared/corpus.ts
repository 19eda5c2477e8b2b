/**
 * The corpus contract, in one place: corpus ids and where their files live (`corpora/<id>/`), the
 * rules of object keys, prefixes and file paths (never the service's own `runs/`, `api/`, `cache/`),
 * the corpus reference a caller gives (`{id}`, `{prefix}` or `{keys}`, exactly one) and the
 * selection the workflow reads (`{prefix}` or `{keys}`, the Prepare event's `corpus`).
 *
 * Used by ingestion (shared/pipeline/ingest.ts), job files (shared/pipeline/jobs.ts), surveys, the
 * HTTP API (shared/api/schemas.ts) and the local services. Domain code: zod only.
 */
import { z } from 'zod';
import { InvalidInputError } from './errors';
import { exactlyOneProperty, issueMessages } from './validation';

/** Prefix under which corpora are uploaded. */
export const CORPORA_PREFIX = 'corpora/';

/**
 * Key prefixes of the bucket that hold the service's own data; a corpus never points into them.
 * `runs/`: the workflow's files; `api/`: the API's records; `cache/`: ingestion's chunk cache and
 * corpus summaries (shared/pipeline/ingest.ts).
 */
export const RESERVED_PREFIXES = ['runs/', 'api/', 'cache/'] as const;

/** Most corpus keys one run may list (larger corpora: a prefix or a corpus id). */
export const MAX_RUN_KEYS = 1000;
/** Longest object key or prefix, characters (S3 allows 1,024 bytes). */
export const MAX_KEY_CHARS = 1024;

/**
 * A corpus id: the first key segment below `corpora/`; ids become key parts and API path
 * parameters: 1-128 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit.
 */
export const CorpusIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'a corpus id is 1-128 characters of A-Z a-z 0-9 . _ - (starting with a letter or digit)')
  .describe('Corpus id: its files are the objects under `corpora/<id>/` of the project bucket.');

/** Where a corpus id's files live in the bucket: `corpora/<corpusId>/`. */
export const corpusPrefix = (corpusId: string): string => `${CORPORA_PREFIX}${corpusId}/`;

/**
 * Validate a corpus id.
 * @throws InvalidInputError naming the rule.
 */
export function parseCorpusId(corpusId: unknown): string {
  const result = CorpusIdSchema.safeParse(corpusId);
  if (!result.success) throw new InvalidInputError(`Invalid corpus id ${JSON.stringify(corpusId)}: ${issueMessages(result.error)}`);
  return result.data;
}

/**
 * The corpus id of an object key `corpora/<corpusId>/<rest>` (rest non-empty), or undefined for any
 * other key (an object directly under `corpora/`, a folder marker, an invalid id).
 */
export function corpusIdOfKey(key: string): string | undefined {
  if (!key.startsWith(CORPORA_PREFIX)) return undefined;
  const match = /^([^/]+)\/(.+)$/.exec(key.slice(CORPORA_PREFIX.length));
  if (!match || match[2].endsWith('/')) return undefined;
  return CorpusIdSchema.safeParse(match[1]).success ? match[1] : undefined;
}

/**
 * What the workflow reads (the Prepare event's `corpus`): every object under `prefix`, or exactly
 * `keys` (exactly one of the two). The API and job files give the richer {@link CorpusRef}.
 */
export const CorpusSelectionSchema = z
  .object({
    keys: z.array(z.string().min(1).max(MAX_KEY_CHARS)).min(1).max(10_000).optional(),
    prefix: z.string().min(1).max(MAX_KEY_CHARS).optional(),
  })
  .strict()
  .refine((c) => (c.keys === undefined) !== (c.prefix === undefined), 'corpus needs exactly one of keys or prefix');

export type CorpusSelection = z.infer<typeof CorpusSelectionSchema>;

/** What a key-like value is: an object key, a corpus prefix, or a file path inside a corpus. */
export type KeyKind = 'key' | 'prefix' | 'path';

/** One rule of {@link keyProblem}: a value matching `bad` is refused with `problem`. */
interface KeyRule {
  bad: RegExp;
  problem: string;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** Characters no key may hold (control characters, backslash): the one rule JSON Schema states positively. */
// oxlint-disable-next-line no-control-regex -- control characters are exactly what this rule forbids.
const KEY_FORBIDDEN_CHARACTERS = /[\u0000-\u001f\u007f\\]/;

/**
 * The rules of a key, prefix or path, in the order they are checked. The one implementation of them:
 * {@link keyProblem} applies them, and {@link keyLike} states them in the JSON Schema of the API
 * (docs/openapi.yaml, the API Gateway request models) as `pattern` / `not: {pattern}`, so a value the
 * document allows is one the API accepts.
 */
function keyRules(kind: KeyKind): KeyRule[] {
  const rules: KeyRule[] = [
    { bad: /^[A-Za-z][A-Za-z0-9+.-]*:\/\//, problem: 'must be a key inside the project bucket, not a URI (no other bucket is ever read)' },
    { bad: /^\//, problem: 'must not start with "/"' },
    { bad: KEY_FORBIDDEN_CHARACTERS, problem: 'must not contain control characters or "\\"' },
    // An empty, "." or ".." segment; a prefix may end with "/" (its last, empty segment is allowed).
    {
      bad: kind === 'prefix' ? /(?:^|\/)\.{0,2}\/|(?:^|\/)\.{1,2}$/ : /(?:^|\/)\.{0,2}(?:\/|$)/,
      problem: 'must not contain empty, "." or ".." path segments',
    },
    // A file name of most file systems (and of the local bucket, a directory) is at most 255 bytes.
    { bad: /[^/]{256}/, problem: 'must not contain a path segment longer than 255 characters' },
  ];
  if (kind !== 'path') {
    for (const reserved of RESERVED_PREFIXES) {
      // A key inside the reserved prefix; a prefix also must not be the start of one ("ru" lists runs/).
      const starts = kind === 'prefix' ? Array.from({ length: reserved.length - 1 }, (_, n) => reserved.slice(0, n + 1)) : [];
      const alternatives = [`${escapeRegExp(reserved)}`, ...starts.map((start) => `${escapeRegExp(start)}$`)];
      rules.push({ bad: new RegExp(`^(?:${alternatives.join('|')})`), problem: `must not point into ${reserved} (the service's own data)` });
    }
  }
  return rules;
}

/** Why a key or prefix cannot be used, or undefined (the first of {@link keyRules} it breaks). */
export function keyProblem(key: string, kind: KeyKind): string | undefined {
  return keyRules(kind).find((rule) => rule.bad.test(key))?.problem;
}

/**
 * A key, prefix or path of the bucket: non-empty (one issue for an empty value, not one per rule),
 * bounded, and without the problems of {@link keyProblem}. Its JSON Schema carries the same rules:
 * the forbidden characters as a `pattern`, the others as `not: {pattern}`.
 */
export const keyLike = (kind: KeyKind, max: number) =>
  z
    .string()
    .min(1, { error: `${kind} must not be empty`, abort: true })
    .max(max, { error: `${kind} must be at most ${max} characters` })
    .superRefine((value, ctx) => {
      const problem = keyProblem(value, kind);
      if (problem) ctx.addIssue({ code: 'custom', message: `${kind} ${problem}` });
    })
    .meta({
      pattern: `^[^${KEY_FORBIDDEN_CHARACTERS.source.slice(1, -1)}]*$`,
      allOf: keyRules(kind)
        .filter((rule) => rule.bad !== KEY_FORBIDDEN_CHARACTERS)
        .map((rule) => ({ not: { pattern: rule.bad.source.replace(/\\\//g, '/') } })),
    });

/** What a run reads: a corpus id, a prefix or a list of keys of the project bucket (exactly one). */
export const CorpusRefSchema = z
  .object({
    id: CorpusIdSchema.optional(),
    prefix: keyLike('prefix', MAX_KEY_CHARS).optional().describe('Every object whose key starts with this prefix (not `runs/`, `api/`, `cache/`).'),
    keys: z.array(keyLike('key', MAX_KEY_CHARS)).min(1).max(MAX_RUN_KEYS).optional().describe('Object keys of the project bucket.'),
  })
  .strict()
  .refine((c) => [c.id, c.prefix, c.keys].filter((v) => v !== undefined).length === 1, 'corpus needs exactly one of id, prefix or keys')
  .describe('The corpus: exactly one of `id`, `prefix` or `keys`, always inside the project bucket.');
exactlyOneProperty(CorpusRefSchema);

export type CorpusRef = z.infer<typeof CorpusRefSchema>;

/**
 * The workflow's corpus (the Prepare event's `corpus`) of a validated corpus reference: an id is
 * the prefix `corpora/<id>/`. Used by the API (shared/api/core.ts), job files
 * (shared/pipeline/jobs.ts) and survey inputs (shared/survey/workflow.ts), so all resolve a corpus the same way.
 */
export function resolveCorpusRef(ref: CorpusRef): CorpusSelection {
  if (ref.id !== undefined) return { prefix: corpusPrefix(ref.id) };
  if (ref.prefix !== undefined) return { prefix: ref.prefix };
  return { keys: [...(ref.keys ?? [])] };
}
