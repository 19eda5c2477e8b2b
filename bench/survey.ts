/**
 * Survey benchmark (docs/SURVEY.md, "Benchmark"): runs the survey use case with the offline
 * extractive reader on the two survey corpora of ../shared/data/survey (read in place, never copied)
 * and measures the result.
 *
 * Usage: npx tsx bench/survey.ts [--out <dir>]
 *
 * Figures per corpus:
 * - sections, words (prose words of the sections), citations per 1,000 words (kept citations);
 * - citation validity: share of kept citations whose cited source's own text (title + abstract)
 *   lexically supports the sentence (`lexicalSupport` >= 0.5: IDF-weighted share of the sentence's
 *   content terms present in the source);
 * - source coverage: share of the topic-relevant sources that are cited (relevant = the source
 *   covers at least half of the topic's IDF-weighted terms);
 * - outline / label overlap: (a) share of the corpus's frequent labels (on >= 5% of sources and
 *   < 50%, so not the corpus-wide one) that are the most over-represented label (lift) among the
 *   cited sources of at least one section; (b) share of section headings sharing a word with a label.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ExtractiveReader } from '../shared/extractive';
import { contentTerms } from '../shared/extractive/text';
import { lexicalSupport } from '../shared/survey/citations';
import { parseSurveyCorpus } from '../shared/survey/corpus';
import { ExtractiveSurveyModel } from '../shared/survey/extractive';
import { runSurvey } from '../shared/survey/survey';
import type { SurveyResult, SurveySource } from '../shared/survey/types';
import { benchArgs } from './support/args';

const USAGE = `Usage: npx tsx bench/survey.ts [--out <dir>]

Survey use case (docs/SURVEY.md, "Benchmark"): runs the survey (runSurvey, in this process) with the
offline extractive reader on the two survey corpora of ../shared/data/survey (read in place), writes
each survey (<corpus>.md and its metadata <corpus>.json) to the output directory and prints, per
corpus, as a JSON array: sources, sections, words, citations kept and removed, citations per 1,000
words, citation validity (share of kept citations whose source's title and abstract lexically
support the sentence), source coverage (share of the topic-relevant sources cited), label coverage
and heading/label overlap, the outline, and seconds.

Options:
  --out DIR      where the surveys are written, created if missing (default: a new directory
                 extagents-bench-survey-* under the system's temporary directory, kept)
  -h, --help     print this and exit
`;

const DATA = path.resolve(__dirname, '..', '..', 'shared', 'data', 'survey');

const CORPORA = [
  { name: 'llm_planning_papers_merged', file: 'llm_planning_papers_merged.jsonl', topic: 'large language models for planning' },
  { name: 'cs_CL_recent_500', file: 'cs_CL_recent_500.lthei.json', topic: 'large language models for natural language processing' },
];

/** Measured figures of one survey. */
interface Figures {
  corpus: string;
  topic: string;
  sources: number;
  sections: number;
  words: number;
  citationsKept: number;
  citationsRemoved: number;
  citationsPer1000Words: number;
  citationValidity: number;
  relevantSources: number;
  sourceCoverage: number;
  labelCoverage: number;
  headingLabelOverlap: number;
  seconds: number;
  outline: string[];
}

function measure(result: SurveyResult, sources: SurveySource[], topic: string): Omit<Figures, 'corpus' | 'topic' | 'seconds'> {
  const byId = new Map(sources.map((s) => [s.id, s]));
  const m = result.metadata;
  // Kept citations with their sentences, re-read from the rendered sections.
  const citations: Array<{ id: string; sentence: string; section: number }> = [];
  result.sections.forEach((section, i) => {
    for (const paragraph of section.text.split(/\n{2,}/)) {
      let claim = '';
      for (const part of paragraph.split(/(\[[^\]]+\])/)) {
        const group = /^\[([^\]]+)\]$/.exec(part);
        if (group === null) {
          if (part.trim() !== '') claim = part.trim();
          continue;
        }
        for (const id of group[1].split(/\s*[,;]\s*/)) citations.push({ id, sentence: claim, section: i });
      }
    }
  });
  const valid = citations.filter((c) => lexicalSupport(c.sentence, byId.get(c.id)?.text ?? '') >= 0.5).length;
  const relevant = sources.filter((s) => lexicalSupport(topic, s.text) >= 0.5);
  const cited = new Set(citations.map((c) => c.id));
  const labelCount = new Map<string, number>();
  for (const s of sources) for (const l of new Set(s.categories ?? [])) labelCount.set(l, (labelCount.get(l) ?? 0) + 1);
  const frequent = [...labelCount].filter(([, n]) => n >= 0.05 * sources.length && n < 0.5 * sources.length).map(([l]) => l);
  const dominant = new Set<string>();
  result.sections.forEach((section) => {
    const ids = section.cited;
    if (ids.length === 0) return;
    let best: { label: string; lift: number } | undefined;
    for (const label of frequent) {
      const share = ids.filter((id) => byId.get(id)?.categories?.includes(label)).length / ids.length;
      const lift = share / ((labelCount.get(label) ?? 1) / sources.length);
      if (share > 0 && (best === undefined || lift > best.lift)) best = { label, lift };
    }
    if (best !== undefined) dominant.add(best.label);
  });
  const labelTerms = new Set([...labelCount.keys()].flatMap((l) => contentTerms(l.replace(/[-_.]/g, ' '))));
  const headingHits = result.sections.filter((s) => contentTerms(s.heading).some((t) => labelTerms.has(t))).length;
  return {
    sources: sources.length,
    sections: result.sections.length,
    words: m.words,
    citationsKept: m.citations.kept,
    citationsRemoved: m.citations.removed,
    citationsPer1000Words: round((1000 * m.citations.kept) / Math.max(1, m.words)),
    citationValidity: round(valid / Math.max(1, citations.length)),
    relevantSources: relevant.length,
    sourceCoverage: round(relevant.filter((s) => cited.has(s.id)).length / Math.max(1, relevant.length)),
    labelCoverage: round(dominant.size / Math.max(1, frequent.length)),
    headingLabelOverlap: round(headingHits / Math.max(1, result.sections.length)),
    outline: result.outline.sections.map((s) => s.heading),
  };
}

const round = (x: number): number => Math.round(x * 1000) / 1000;

async function main(): Promise<void> {
  const { values } = benchArgs(USAGE, { out: { type: 'string' } });
  const out = values.out ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'extagents-bench-survey-')));
  await fs.mkdir(out, { recursive: true });
  const all: Figures[] = [];
  for (const corpus of CORPORA) {
    const file = path.join(DATA, corpus.file);
    const { sources, skipped } = parseSurveyCorpus([{ id: corpus.file, text: await fs.readFile(file, 'utf8') }]);
    const started = Date.now();
    const result = await runSurvey(
      { topic: corpus.topic, sources, skipped: skipped.length },
      { seeker: new ExtractiveReader(), model: new ExtractiveSurveyModel() },
    );
    const seconds = (Date.now() - started) / 1000;
    await fs.writeFile(path.join(out, `${corpus.name}.md`), result.markdown);
    await fs.writeFile(path.join(out, `${corpus.name}.json`), JSON.stringify(result.metadata, null, 2));
    all.push({ corpus: corpus.name, topic: corpus.topic, seconds, ...measure(result, sources, corpus.topic) });
  }
  process.stdout.write(`${JSON.stringify(all, null, 2)}\n`);
  process.stdout.write(`surveys written to ${out}\n`);
}

void main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
