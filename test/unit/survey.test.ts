import { ExtractiveReader } from '../../shared/extractive';
import { contentTerms } from '../../shared/extractive/text';
import type { ChatModel, ChatRequest, ChatResponse } from '../../shared/ports';
import { checkCitations, lexicalSupport } from '../../shared/survey/citations';
import { chunkSources } from '../../shared/survey/chunking';
import { parseSurveyCorpus } from '../../shared/survey/corpus';
import { ExtractiveSurveyModel, scopeSentence, titleCase } from '../../shared/survey/extractive';
import { focusTerms } from '../../shared/survey/focus';
import { LlmSurveyModel, parseOutlineReply, parseSectionReply } from '../../shared/survey/llm';
import type { OutlineRequest, OutlineResult, SurveyModel } from '../../shared/survey/ports';
import { draftOutline, needsSectionRound, rerankForSection, runSurvey, sectionEvidence, seekRound } from '../../shared/survey/survey';
import type { Message } from '../../shared/types';
import { SURVEY_PAPERS } from '../support/survey-corpus';

const TOPIC = 'language models for planning';

/** The topic round's pool over chunks of about one paper each. */
async function topicPool(): Promise<Message[]> {
  const chunks = chunkSources(SURVEY_PAPERS, 90);
  const round = await seekRound(chunks, { query: TOPIC, round: 1, synchronized: [], idPrefix: 'r1-', concurrency: 4 }, new ExtractiveReader());
  return round.messages;
}

const message = (id: string, sourceId: string, text: string): Message => ({
  id,
  round: 1,
  chunkIndex: 0,
  score: 80,
  evidence: text,
  tokens: 20,
  quotes: [{ documentId: sourceId, start: 0, end: text.length, text }],
  sources: [sourceId],
});

describe('survey corpus and chunking', () => {
  it('reads JSONL papers and Markdown files, deriving an id for a record without one', () => {
    const jsonl = [
      JSON.stringify({
        arxiv_id: '2304.11477',
        title: 'LLM+P',
        abstract: 'Plans.',
        authors: 'Liu, Bo and Jiang, Yuqian',
        year: '2023',
        categories: "['plan-generation', 'language-translation']",
      }),
      JSON.stringify({ arxiv_id: null, title: 'There and back again', abstract: 'Stories.', authors: 'Kelly, Jack and Mateas, Michael', year: 2023 }),
      JSON.stringify({ id: 'x1', title: 'No abstract' }),
    ].join('\n');
    const corpus = parseSurveyCorpus([
      { id: 'papers.jsonl', text: jsonl },
      { id: 'notes/intro.md', text: '# Planning notes\n\nSome text.' },
    ]);
    expect(corpus.sources.map((s) => s.id)).toEqual(['2304.11477', 'kelly2023there', 'notes/intro.md']);
    expect(corpus.sources[0].categories).toEqual(['plan-generation', 'language-translation']);
    expect(corpus.sources[2].title).toBe('Planning notes');
    expect(corpus.skipped).toEqual([{ where: 'papers.jsonl:3', reason: 'x1: no abstract' }]);
  });

  it('never splits a paper across chunks, and every message names the sources it came from', async () => {
    const chunks = chunkSources(SURVEY_PAPERS, 200);
    expect(chunks.length).toBeGreaterThan(2);
    const placements = SURVEY_PAPERS.map((p) => chunks.filter((c) => c.segments.some((s) => s.documentId === p.id)));
    for (const [i, found] of placements.entries()) {
      expect(found).toHaveLength(1);
      const segment = found[0].segments.find((s) => s.documentId === SURVEY_PAPERS[i].id);
      expect(segment).toMatchObject({ start: 0, end: SURVEY_PAPERS[i].text.length });
    }
    const pool = await topicPool();
    expect(pool.length).toBeGreaterThan(0);
    for (const m of pool) {
      expect(m.sources.length).toBeGreaterThan(0);
      for (const q of m.quotes) expect(SURVEY_PAPERS.find((p) => p.id === q.documentId)?.text.slice(q.start, q.end)).toBe(q.text);
    }
  });
});

describe('outline (knowledge-accumulating reasoning)', () => {
  it('doubles k while the reasoning agent says the knowledge does not cover the topic', async () => {
    const seen: number[] = [];
    const model: SurveyModel = {
      description: 'stub',
      extractive: false,
      async outline(request: OutlineRequest): Promise<OutlineResult> {
        seen.push(request.messages.length);
        const usage = { calls: 1, inputTokens: 0, outputTokens: 0 };
        if (request.messages.length < 5) return { covered: false, outline: null, usage, warnings: [] };
        return {
          covered: true,
          outline: { title: 'T', sections: [{ heading: 'A', scope: 'a' }] },
          usage,
          warnings: [],
        };
      },
      writeSection: async () => ({ text: '', usage: { calls: 0, inputTokens: 0, outputTokens: 0 }, warnings: [] }),
    };
    const pool = Array.from({ length: 20 }, (_, i) => message(`r1-c${i}`, `s${i}`, `evidence number ${i}`));
    const draft = await draftOutline(TOPIC, pool, { maxSections: 4, outlineBudgetTokens: 10_000 }, model);
    expect(seen).toEqual([1, 2, 4, 8]);
    expect(draft.trace.map((s) => [s.k, s.covered])).toEqual([
      [1, false],
      [2, false],
      [4, false],
      [8, true],
    ]);
  });

  it('the extractive outliner grows the outline from shared themes once enough sources cover them', async () => {
    // One message per paper (its whole text), the themes interleaved in pool order.
    const order = [0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11];
    const pool = order.map((i, rank) => ({ ...message(`r1-c${i}`, SURVEY_PAPERS[i].id, SURVEY_PAPERS[i].text), score: 100 - rank }));
    const model = new ExtractiveSurveyModel({ minFacetSources: 3 });
    const small = await model.outline({ topic: TOPIC, messages: pool.slice(0, 3), maxSections: 3, force: false });
    expect(small.covered).toBe(false);
    const draft = await draftOutline(TOPIC, pool, { maxSections: 3, outlineBudgetTokens: 10_000 }, model);
    expect(draft.trace.length).toBeGreaterThan(1);
    expect(draft.trace.at(-1)).toMatchObject({ covered: true, forced: false });
    expect(draft.trace.slice(0, -1).every((s) => !s.covered)).toBe(true);
    expect(draft.outline.sections.length).toBe(3);
    // Every heading names a theme that at least three sources of the pool mention.
    for (const section of draft.outline.sections) {
      const terms = contentTerms(section.heading);
      const mentioning = new Set(pool.filter((m) => terms.every((t) => contentTerms(m.evidence).includes(t))).flatMap((m) => m.sources));
      expect(mentioning.size).toBeGreaterThanOrEqual(3);
    }
    expect(draft.outline.sections.map((s) => s.heading.toLowerCase()).join(' | ')).toMatch(/pddl|classical/);
  });
});

describe('extractive outline: readable headings and scopes, no thin section', () => {
  // Robot papers (four mention robots, three "robot task planning", two "long-horizon tasks"),
  // heuristic search papers (three), and two tool papers (a facet too thin to be a section).
  const texts: Record<string, string> = {
    a1: 'Robot task planning decomposes household instructions into steps for a mobile robot.',
    a2: 'We study robot task planning for long-horizon tasks in real kitchens.',
    a3: 'Robot task planning with feedback corrects failed grasps.',
    a4: 'The robot completes long-horizon tasks by replanning after each failure.',
    h1: 'Heuristic search guides the planner through large state spaces.',
    h2: 'Language models propose orderings for heuristic search in classical planning.',
    h3: 'Learned heuristic search finds plans faster than blind search.',
    t1: 'Agents plan tool calls to calculators and search engines.',
    t2: 'Tool calls are planned by language models before execution.',
  };
  const pool = Object.entries(texts).map(([id, text], i) => ({ ...message(`r1-c${i}`, id, text), score: 90 - i }));
  const outlineOf = async (force: boolean) =>
    new ExtractiveSurveyModel().outline({ topic: 'Language models for planning', messages: pool, maxSections: 3, force });

  it('names sections with the supported multi-word phrases, title-cased, never the topic', async () => {
    const result = await outlineOf(true);
    // The old outliner named the robot facet "Robot" ("task" was a filler word).
    expect(result.outline?.sections.map((s) => s.heading)).toEqual(['Heuristic Search', 'Robot Task Planning']);
    const topicTerms = new Set(contentTerms('Language models for planning'));
    for (const { heading } of result.outline?.sections ?? []) {
      expect(heading).toBe(titleCase(heading));
      expect(contentTerms(heading).some((t) => !topicTerms.has(t))).toBe(true);
    }
    expect(titleCase('long-horizon tasks for PDDL planners')).toBe('Long-Horizon Tasks for PDDL Planners');
  });

  it('writes each scope as a sentence, not "<phrase> in <topic>"', async () => {
    const scopes = (await outlineOf(true)).outline?.sections.map((s) => s.scope);
    expect(scopes).toEqual([
      'How work on language models for planning addresses heuristic search.',
      'How work on language models for planning addresses robot task planning and long-horizon tasks.',
    ]);
    for (const scope of scopes ?? []) expect(scope).not.toMatch(/ in Language models for planning$/);
    expect(scopeSentence('LLM planning', ['PDDL', 'classical planners', 'plan repair'])).toBe(
      'How work on LLM planning addresses PDDL, classical planners and plan repair.',
    );
  });

  it('folds a facet too thin to be a section into its nearest section or leaves it out, even when forced', async () => {
    // Not covered: only two facets have three sources.
    expect((await outlineOf(false)).covered).toBe(false);
    const forced = await outlineOf(true);
    const outline = forced.outline;
    // The old outliner, forced, made sections of one- and two-source facets ("Tool Calls", "Robot, long-horizon").
    expect(outline?.sections).toHaveLength(2);
    expect(outline?.sections.map((s) => s.heading).join(' ')).not.toMatch(/Tool|Long/);
    // "long-horizon tasks" (two sources, both robot papers) is part of the robot section's scope.
    expect(outline?.sections[1].scope).toContain('long-horizon tasks');
    expect(forced.warnings).toEqual(['outline forced after the whole pool: 2 of 3 sections have enough sources']);
    // Deterministic: the same messages give the same outline.
    expect((await outlineOf(true)).outline).toEqual(outline);
  });

  it("ranks a section's messages by its focus: not the topic, generic nouns or the scope's frame words", () => {
    const query = 'Robot Task Planning. How work on language models for planning addresses robot task planning and long-horizon tasks.';
    expect(focusTerms(query, 'Language models for planning')).toEqual(['robot', 'long', 'horizon']);
    const ranked = rerankForSection(
      [message('m1', 's1', 'This work addresses task planning for many tasks.'), message('m2', 's2', 'A mobile robot plans long-horizon chores.')],
      query,
      'Language models for planning',
    );
    expect(ranked.map((r) => r.message.id)).toEqual(['m2', 'm1']);
    expect(ranked[1].relevance).toBe(0);
  });

  it('gives a section a synchronized round when its relevant messages hold too few words for its share of the target', () => {
    // Ten relevant one-sentence messages: enough messages (8), far fewer words than 2 x 500.
    const ranked = Array.from({ length: 10 }, (_, i) => ({
      message: message(`m${i}`, `s${i}`, 'A mobile robot plans household chores with feedback.'),
      relevance: 1,
    }));
    const options = { minSectionMessages: 8, rounds: 2 };
    expect(needsSectionRound(ranked, options, 6)).toBe(false);
    expect(needsSectionRound(ranked, { ...options, targetWords: 3000 }, 6)).toBe(true);
    expect(needsSectionRound(ranked, { ...options, targetWords: 3000, rounds: 1 }, 6)).toBe(false);
    const long = ranked.map((r) => ({ ...r, message: { ...r.message, evidence: Array.from({ length: 15 }, () => r.message.evidence).join(' ') } }));
    expect(needsSectionRound(long, { ...options, targetWords: 3000 }, 6)).toBe(false);
  });

  it('renders each scope once, as a sentence, in the Markdown survey, and no thin section', async () => {
    const result = await runSurvey(
      { topic: 'Language models for planning', sources: SURVEY_PAPERS, options: { chunkTokens: 90, maxSections: 3, targetWords: 300 } },
      { seeker: new ExtractiveReader(), model: new ExtractiveSurveyModel(), now: () => new Date('2025-01-01T00:00:00Z') },
    );
    const scopes = [...result.markdown.matchAll(/^\*Scope: (.*)\*$/gm)].map((m) => m[1]);
    expect(scopes.length).toBe(result.sections.length);
    for (const scope of scopes) expect(scope).toMatch(/^How work on language models for planning addresses [^.]+\.$/);
    // No thin section: the old outliner, forced, added two- and one-citation sections ("Plan API").
    expect(result.metadata.sections.every((s) => s.citations >= 3)).toBe(true);
  });
});

describe('section writing', () => {
  it('gathers thin evidence with a synchronized round and writes cited corpus sentences on the section scope', async () => {
    const pool = await topicPool();
    const model = new ExtractiveSurveyModel();
    const outline = { title: 'T', sections: [{ heading: 'Robot Task Planning', scope: 'robot actions planned by language models' }] };
    const chunks = chunkSources(SURVEY_PAPERS, 90);
    const evidence = await sectionEvidence(TOPIC, outline, 0, pool, chunks, { minSectionMessages: 4, rounds: 2, concurrency: 2 }, new ExtractiveReader());
    expect(evidence.synchronized).toBe(true);
    expect(evidence.messages.length).toBeGreaterThan(pool.length);
    const draft = await model.writeSection({
      topic: TOPIC,
      outline,
      section: 0,
      messages: evidence.messages,
      sources: SURVEY_PAPERS,
      targetWords: 80,
      avoid: [],
    });
    const citations = [...draft.text.matchAll(/\[([^\]]+)\]/g)].map((m) => m[1]);
    expect(citations.length).toBeGreaterThan(1);
    expect(citations.filter((id) => id.startsWith('r')).length).toBeGreaterThan(citations.length / 2);
    const checked = checkCitations(draft.text, { corpusIds: new Set(SURVEY_PAPERS.map((s) => s.id)), messages: evidence.messages, section: 1 });
    expect(checked.counts.removed).toBe(0);
    const firstSentence = checked.kept[0].sentence;
    const again = await model.writeSection({
      topic: TOPIC,
      outline,
      section: 0,
      messages: evidence.messages,
      sources: SURVEY_PAPERS,
      targetWords: 80,
      avoid: [firstSentence],
    });
    expect(again.text).not.toContain(firstSentence);
  });
});

describe('citation check', () => {
  const messages = [
    message('r1-c0', 'p1', 'Large language models translate natural language goals into PDDL problem files for classical planners.'),
    message('r1-c1', 'r1', 'The robot executes each action and replans when an action fails.'),
  ];
  const corpusIds = new Set(['p1', 'r1', 't1']);

  it('removes a fabricated id and counts it', () => {
    const text = 'Language models translate natural language goals into PDDL problem files [p1, 9999.00001].';
    const checked = checkCitations(text, { corpusIds, messages, section: 1 });
    expect(checked.text).toBe('Language models translate natural language goals into PDDL problem files [p1].');
    expect(checked.counts).toEqual({ kept: 1, removed: 1, fabricated: 1, unsupported: 0 });
    expect(checked.removed[0]).toMatchObject({ sourceId: '9999.00001', reason: 'fabricated' });
  });

  it("removes a real id attached to another source's claim", () => {
    const text =
      'The robot executes each action and replans when an action fails [p1]. Goals are translated into PDDL problem files for classical planners [p1].';
    const checked = checkCitations(text, { corpusIds, messages, section: 2 });
    expect(checked.text).toBe(
      'The robot executes each action and replans when an action fails. Goals are translated into PDDL problem files for classical planners [p1].',
    );
    expect(checked.counts).toEqual({ kept: 1, removed: 1, fabricated: 0, unsupported: 1 });
    expect(checked.removed[0]).toMatchObject({ section: 2, sourceId: 'p1', reason: 'unsupported' });
    expect(lexicalSupport(checked.removed[0].sentence, messages[1].evidence)).toBeGreaterThan(0.9);
  });

  it('removes a real id of the corpus whose source no given message came from', () => {
    const checked = checkCitations('Tools help agents plan API calls [t1].', { corpusIds, messages, section: 1 });
    expect(checked.text).toBe('Tools help agents plan API calls.');
    expect(checked.counts.unsupported).toBe(1);
  });
});

/** A fake reasoner chat model: outline JSON, and a section citing one real and one fabricated id. */
class ScriptedReasoner implements ChatModel {
  readonly modelId = 'scripted';
  readonly requests: ChatRequest[] = [];
  async complete(request: ChatRequest): Promise<ChatResponse> {
    this.requests.push(request);
    const user = request.messages[0].text;
    let text: string;
    if (request.system.includes('Outline') || user.includes('Outline a survey')) {
      text =
        'Here is the outline:\n```json\n{"covered": true, "title": "Planning with LMs", "sections": [{"heading": "Robots", "scope": "robot task planning"}]}\n```';
    } else {
      const id = /sources="([^",]+)/.exec(user)?.[1] ?? 'none';
      const evidence = /<message [^>]*>\n([^\n]+)/.exec(user)?.[1] ?? '';
      text = `## Robots\n\n${evidence} [${id}] Robots also fly to the moon [0000.00000].`;
    }
    return { text, stopReason: 'end_turn', inputTokens: 100, outputTokens: 50 };
  }
}

describe('LLM survey roles (same code path)', () => {
  it('parses outlines leniently', () => {
    expect(parseOutlineReply('{"covered": false}', TOPIC, 5)).toEqual({ covered: false, outline: null });
    expect(parseOutlineReply('1. PDDL: translation to PDDL\n2. Robots: robot planning', TOPIC, 5).outline?.sections).toEqual([
      { heading: 'PDDL', scope: 'translation to PDDL' },
      { heading: 'Robots', scope: 'robot planning' },
    ]);
    expect(parseSectionReply('## Title\n\nText [a].\n\n## References\n- [a] x')).toBe('Text [a].');
  });

  it('runs a survey over a chat model: the fabricated citation is removed, the supported one kept', async () => {
    const reasoner = new ScriptedReasoner();
    const result = await runSurvey(
      { topic: TOPIC, sources: SURVEY_PAPERS, options: { chunkTokens: 200, maxSections: 1, targetWords: 200, rounds: 1 } },
      { seeker: new ExtractiveReader(), model: new LlmSurveyModel({ reasoner }), now: () => new Date('2025-01-01T00:00:00Z') },
    );
    expect(result.metadata.extractive).toBe(false);
    expect(result.metadata.citations.fabricated).toBe(1);
    expect(result.metadata.citations.kept).toBe(1);
    expect(result.markdown).not.toContain('0000.00000');
    expect(result.markdown).toContain('## References');
    expect(result.metadata.usage.writer.calls).toBe(1);
    expect(reasoner.requests[0].messages[0].text).toContain('<messages>');
  });
});
