import path from 'node:path';
import { readInfiniteBenchPredictions, defaultDataRoot } from '../../eval/datasets';
import { formatWarning } from '../../eval/jsonl';
import {
  cmrcExactMatch,
  cmrcF1,
  cmrcSegments,
  hotpotExactMatch,
  hotpotF1,
  infiniteBenchEnF1,
  infiniteBenchZhF1,
  longestCommonRun,
  mean,
  normalizeAnswer,
  normalizeZhAnswer,
  scoreHotpotAnswers,
  titleRecall,
} from '../../eval/scorers';
import { describeWithSharedData } from '../support/shared-data';

const IB = path.join(defaultDataRoot(), 'infinitebench');

describe('HotpotQA answer scoring', () => {
  it('normalizes case, ASCII punctuation, articles and whitespace', () => {
    expect(normalizeAnswer('  The Eiffel-Tower, in  Paris! ')).toBe('eiffeltower in paris');
    expect(normalizeAnswer('An apple a day')).toBe('apple day');
    // Articles only as whole words: "theater" and "Anthem" keep their letters, and a non-ASCII letter is a word character as in Python 3.
    expect(normalizeAnswer('Theater Anthem')).toBe('theater anthem');
    expect(normalizeAnswer('éthe')).toBe('éthe');
  });

  it('counts exact match after normalization', () => {
    expect(hotpotExactMatch('The Eiffel Tower.', 'eiffel tower')).toBe(1);
    expect(hotpotExactMatch('Eiffel Towers', 'eiffel tower')).toBe(0);
  });

  it('computes token-multiset F1 by hand', () => {
    // 2 common tokens; precision 2/4, recall 2/2 -> F1 2/3.
    expect(hotpotF1('Barack Obama was president', 'Barack Obama').f1).toBeCloseTo(2 / 3, 10);
    // Multiset: "new" counted once in the overlap; precision 2/3, recall 1 -> F1 0.8.
    const s = hotpotF1('new new york', 'New York');
    expect(s).toEqual({ f1: expect.closeTo(0.8, 10), precision: expect.closeTo(2 / 3, 10), recall: 1 });
    expect(hotpotF1('Paris', 'London').f1).toBe(0);
  });

  it('gives F1 0 when either side is yes/no/noanswer and they differ', () => {
    expect(hotpotF1('yes', 'no').f1).toBe(0);
    expect(hotpotF1('yes it is', 'yes').f1).toBe(0);
    expect(hotpotF1('no', 'no way').f1).toBe(0);
    expect(hotpotF1('Yes.', 'yes').f1).toBe(1);
  });

  it('averages over the gold questions, scoring a missing prediction 0', () => {
    const gold = new Map([
      ['q1', 'yes'],
      ['q2', 'Barack Obama'],
      ['q3', 'Paris'],
    ]);
    const predictions = new Map([
      ['q1', 'yes'],
      ['q2', 'Barack Obama was president'],
      ['extra', 'ignored'],
    ]);
    const scores = scoreHotpotAnswers(gold, predictions);
    expect(scores.count).toBe(3);
    expect(scores.missing).toEqual(['q3']);
    expect(scores.em).toBeCloseTo(1 / 3, 10);
    expect(scores.f1).toBeCloseTo((1 + 2 / 3) / 3, 10);
  });

  it('computes title-level evidence recall', () => {
    expect(titleRecall(['A', 'B', 'A'], ['B', 'C'])).toBe(0.5);
    expect(titleRecall([], ['x'])).toBe(1);
  });
});

describe('CMRC 2018 scoring', () => {
  it('segments CJK characters singly and other letters/digits as runs, dropping punctuation', () => {
    expect(cmrcSegments('《战国无双3》由光荣和ω-force开发，2018年')).toEqual([
      '战',
      '国',
      '无',
      '双',
      '3',
      '由',
      '光',
      '荣',
      '和',
      'ω',
      'force',
      '开',
      '发',
      '2018',
      '年',
    ]);
    expect(cmrcSegments('  Hello World  ')).toEqual(['hello', 'world']);
  });

  it('uses the longest common contiguous run, as the official find_lcs does', () => {
    expect(longestCommonRun(['北', '京', '的', '大', '学'], ['北', '京', '大', '学'])).toBe(2);
    // gold 4 segments, prediction 5, run 2: precision 2/5, recall 2/4 -> F1 4/9.
    expect(cmrcF1('北京的大学', ['北京大学'])).toBeCloseTo(4 / 9, 10);
    expect(cmrcF1('光荣和ω-force', ['光荣和ω-force'])).toBe(1);
    expect(cmrcF1('完全无关', ['北京'])).toBe(0);
  });

  it('takes the best gold answer', () => {
    expect(cmrcF1('村雨城', ['村雨城模式', '村雨城'])).toBe(1);
  });

  it('counts exact match after removing the official punctuation list', () => {
    expect(cmrcExactMatch('《战国无双3》', ['战国无双3'])).toBe(1);
    expect(cmrcExactMatch('Force：', ['force'])).toBe(1);
    expect(cmrcExactMatch('战国无双', ['战国无双3'])).toBe(0);
  });
});

describe('InfiniteBench QA scoring', () => {
  it('normalizes Chinese answers with the official punctuation list (which omits 《)', () => {
    expect(normalizeZhAnswer('《三国》， 演义 A！')).toBe('《三国演义a');
  });

  it('takes the maximum over gold answers', () => {
    expect(infiniteBenchEnF1('On an island called the Hebrides.', ['stockings', 'the hebrides'])).toBeCloseTo((2 * (1 / 4) * 1) / (1 / 4 + 1), 10);
    expect(infiniteBenchZhF1('两个', ['2', '两个', '二'])).toBe(1);
    expect(infiniteBenchEnF1('anything', [])).toBe(0);
  });

  describeWithSharedData('on the published predictions of ../shared/data/infinitebench', () => {
    // Published scores (percent), /work/shared/data/README.md; files under infinitebench/.
    const published: Array<[string, string, number]> = [
      ['preds/gpt4.preds_longbook_qa_eng.jsonl', 'en', 22.44],
      ['preds/gpt4.preds_longbook_qa_chn.jsonl', 'zh', 25.96],
      ['preds/kimi.preds_longbook_qa_eng.jsonl', 'en', 16.52],
      ['preds/kimi.preds_longbook_qa_chn.jsonl', 'zh', 17.93],
      ['preds/claude2.preds_longbook_qa_eng.jsonl', 'en', 11.97],
      ['preds/claude2.preds_longbook_qa_chn.jsonl', 'zh', 9.64],
      ['preds/yi-34b-200k.preds_longbook_qa_eng.jsonl', 'en', 12.17],
      ['preds/yi-34b-200k.preds_longbook_qa_chn.jsonl', 'zh', 13.61],
      ['preds/yi-6b-200k.preds_longbook_qa_eng.jsonl', 'en', 9.2],
      ['preds/yi-6b-200k.preds_longbook_qa_chn.jsonl', 'zh', 15.07],
      ['preds_llmxmapreduce/Meta-Llama-3-70B-Instruct.processed.preds_longbook_qa_eng.jsonl', 'en', 34.7],
      ['preds_llmxmapreduce/Qwen2-72B-Instruct.processed.preds_longbook_qa_eng.jsonl', 'en', 23.13],
      ['preds_llmxmapreduce/Qwen2-72B-Instruct.processed.preds_longbook_qa_chn.jsonl', 'zh', 19.1],
      ['preds_llmxmapreduce/MiniCPM3-4B.processed.preds_longbook_qa_eng.jsonl', 'en', 28.39],
      ['preds_llmxmapreduce/MiniCPM3-4B.processed.preds_longbook_qa_chn.jsonl', 'zh', 23.66],
    ];

    it.each(published)('reproduces the published score of %s (%s) to two decimals', (file, language, score) => {
      const { predictions, warnings } = readInfiniteBenchPredictions(path.join(IB, file));
      const scorer = language === 'en' ? infiniteBenchEnF1 : infiniteBenchZhF1;
      const ours = mean(predictions.map((p) => scorer(p.prediction, p.golds))) * 100;
      expect(warnings).toEqual([]);
      expect(ours.toFixed(2)).toBe(score.toFixed(2));
    });

    it('reports and skips the malformed last line of yarn-mistral Zh.QA without crashing', () => {
      const file = path.join(IB, 'preds/yarn-mistral.preds_longbook_qa_chn.jsonl');
      const { predictions, warnings } = readInfiniteBenchPredictions(file);
      expect(predictions).toHaveLength(188);
      expect(predictions[187].id).toBe('187');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ file, line: 189 });
      expect(formatWarning(warnings[0])).toMatch(/yarn-mistral\.preds_longbook_qa_chn\.jsonl:189: invalid JSON .*line skipped/);
      // The remaining lines still score.
      expect(mean(predictions.map((p) => infiniteBenchZhF1(p.prediction, p.golds)))).toBeGreaterThan(0);
    });
  });
});
