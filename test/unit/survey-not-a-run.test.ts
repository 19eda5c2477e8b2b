/**
 * A survey keeps its state under runs/<surveyId>/ and its sources under corpora/<surveyId>/, beside
 * the runs and the ingested corpora of the same state directory: neither `runs ls` nor the list of
 * ingested corpus ids (the missing-corpus message) takes it for one of those.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveCorpus } from '../../local/engine/corpus';
import { runIds } from '../../local/engine/runs';
import { surveyRecordKey } from '../../shared/pipeline/layout';

let stateDir: string;
const put = (key: string, text: string): void => {
  const file = path.join(stateDir, 'bucket', key);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
};

beforeEach(() => {
  stateDir = mkdtempSync(path.join(tmpdir(), 'survey-not-a-run-'));
  put('runs/run-1/run.json', '{}');
  put(surveyRecordKey('survey-1'), '{}');
  put('runs/survey-1/survey/sources.json', '[]');
  put('corpora/survey-1/a.txt', 'A source of the survey.');
  put('corpora/mill/b.txt', 'An ingested corpus.');
});
afterEach(() => rmSync(stateDir, { recursive: true, force: true }));

it('runs ls lists the run, not the survey', async () => {
  await expect(runIds(stateDir)).resolves.toEqual(['run-1']);
});

it("the missing-corpus message names the ingested corpus, not the survey's sources", async () => {
  const error = await resolveCorpus(['mil'], stateDir, { stateDir }).catch((e: unknown) => e as Error);
  expect((error as Error).message).toContain('the ingested ones are mill;');
  expect((error as Error).message).not.toContain('survey-1');
});
