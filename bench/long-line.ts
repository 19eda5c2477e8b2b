/**
 * Chunking benchmark for one very long line (the robustness issue's "one 20 MB line"): decode and
 * chunk a single-line document of N MB, for several kinds of content, and check the guarantees.
 *
 * Usage: npx tsx bench/long-line.ts [MB=20] [L=8000] [kind…]
 *   kinds: prose (English sentences, no line break), words (English words, no sentence end),
 *   base64 (random base64, no space), json (minified JSON array), zh (random common Chinese
 *   characters, no punctuation, no space), dna (random a/c/g/t: one lowercase run, a single
 *   pre-token for the tokenizer), zh-commas (random Chinese clauses separated by
 *   full-width commas only). Default: all. Content is pseudo-random (fixed seed) so that no chunk
 *   repeats another: gpt-tokenizer caches the encoding of repeated pre-tokens, and periodic text
 *   would measure the cache, not the chunker.
 * Prints one JSON line per kind: MB, characters, L, decode ms, chunk ms (wall clock) and chunk CPU ms
 * (user + system of this process: less sensitive to other load on the machine), chunks, mean / max
 * tokens per chunk, and whether the chunks concatenate back to the text and stay within L.
 * Times are of one run on this machine (indicative only); the first chunking that meets a long run
 * also builds the rank tables of shared/tokenizer.ts (~0.5 s).
 */
import { chunkCorpus, MIN_CHUNK_TOKENS } from '../shared/chunking';
import { decodeDocument } from '../shared/decode';
import { countTokens } from '../shared/tokenizer';
import { benchArgs, usageError } from './support/args';

const KINDS = ['prose', 'words', 'base64', 'json', 'dna', 'zh', 'zh-commas'];

const USAGE = `Usage: npx tsx bench/long-line.ts [MB=20] [L=8000] [kind…]

Chunking of one very long line (the robustness issue's "one 20 MB line"): decodes and chunks, at L
tokens per chunk, a single-line document of MB megabytes (MiB of UTF-8) for each kind of content, and
checks the guarantees. Content is pseudo-random (fixed seed) so that no chunk repeats another (the
tokenizer caches repeated pre-tokens). Prints one JSON line per kind: MB, characters, L, decode ms,
chunk ms (wall clock) and chunk CPU ms (user + system), chunks, mean / max tokens per chunk, and
whether the chunks concatenate back to the text and stay within L. One run on this machine,
indicative only; the first chunking of a long run also builds shared/tokenizer.ts's rank tables (~0.5 s).

Arguments (positional, in this order):
  MB       the line's size, MiB of UTF-8 (default 20)
  L        the chunk size, tokens (default 8000)
  kind…    one or more of (default: all, in this order):
             prose      English sentences, no line break
             words      English words, no sentence end
             base64     random base64, no space
             json       a minified JSON array
             dna        random a/c/g/t: one lowercase run, a single pre-token for the tokenizer
             zh         random common Chinese characters, no punctuation, no space
             zh-commas  random Chinese clauses separated by full-width commas only
Options:
  -h, --help   print this and exit
`;

/** Deterministic pseudo-random integers (LCG), so every run chunks the same text. */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state >>> 8;
  };
}

const HAN =
  '的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严龙飞';
const WORDS = [
  'treasury',
  'revenue',
  'roads',
  'districts',
  'commerce',
  'union',
  'senate',
  'harvest',
  'abundant',
  'foreign',
  'nations',
  'postal',
  'service',
  'towns',
  'repaired',
  'customary',
];
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** One line of about `bytes` UTF-8 bytes of the given kind (no line break). */
export function longLine(kind: string, bytes: number): string {
  const next = lcg(2024);
  const parts: string[] = [];
  let size = 0;
  const push = (s: string, b = s.length): void => {
    parts.push(s);
    size += b;
  };
  const words = (n: number): string => Array.from({ length: n }, () => WORDS[next() % WORDS.length]).join(' ');
  while (size < bytes) {
    switch (kind) {
      case 'prose':
        push(`${words(6 + (next() % 12)).replace(/^./, (c) => c.toUpperCase())}. `);
        break;
      case 'words':
        push(`${words(8)} `);
        break;
      case 'base64':
        push(Array.from({ length: 64 }, () => B64[next() % 64]).join(''));
        break;
      case 'json':
        push(`{"id":${next() % 100000},"name":"${WORDS[next() % WORDS.length]}","v":${(next() % 1000) / 100}},`);
        break;
      case 'dna':
        push(Array.from({ length: 64 }, () => 'acgt'[next() % 4]).join(''));
        break;
      case 'zh':
        push(Array.from({ length: 64 }, () => HAN[next() % HAN.length]).join(''), 192);
        break;
      case 'zh-commas': {
        const clause = `${Array.from({ length: 4 + (next() % 12) }, () => HAN[next() % HAN.length]).join('')}，`;
        push(clause, clause.length * 3); // 3 UTF-8 bytes per character
        break;
      }
      default:
        throw new Error(`unknown kind ${kind}`);
    }
  }
  return parts.join('');
}

function main(): void {
  const { positionals } = benchArgs(USAGE, {}, true);
  const mb = Number(positionals[0] ?? 20);
  const limit = Number(positionals[1] ?? 8000);
  const kinds = positionals.length > 2 ? positionals.slice(2) : KINDS;
  if (!(mb > 0)) usageError(USAGE, `MB must be a positive number, got ${positionals[0]}`);
  if (!Number.isInteger(limit) || limit < MIN_CHUNK_TOKENS) usageError(USAGE, `L must be an integer >= ${MIN_CHUNK_TOKENS} (tokens), got ${positionals[1]}`);
  const unknown = kinds.filter((kind) => !KINDS.includes(kind));
  if (unknown.length > 0) usageError(USAGE, `unknown kind ${unknown.join(', ')} (${KINDS.join(', ')})`);
  countTokens('warm up the tokenizer');
  for (const kind of kinds) {
    const bytes = new TextEncoder().encode(longLine(kind, mb * 1024 * 1024));
    let t0 = performance.now();
    const decoded = decodeDocument(`${kind}.txt`, bytes);
    const decodeMs = performance.now() - t0;
    if (!('doc' in decoded)) throw new Error(`${kind}: skipped (${decoded.skipped.reason})`);
    t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const chunks = chunkCorpus([decoded.doc], { chunkTokens: limit });
    const chunkMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const tokens = chunks.map((c) => c.tokens);
    console.log(
      JSON.stringify({
        kind,
        mb: +(bytes.length / 1024 / 1024).toFixed(1),
        chars: decoded.doc.text.length,
        L: limit,
        decodeMs: Math.round(decodeMs),
        chunkMs: Math.round(chunkMs),
        chunkCpuMs: Math.round((cpu.user + cpu.system) / 1000),
        chunks: chunks.length,
        meanTokens: Math.round(tokens.reduce((a, b) => a + b, 0) / chunks.length),
        maxTokens: Math.max(...tokens),
        exact: chunks.map((c) => c.text).join('') === decoded.doc.text,
        withinLimit: chunks.every((c) => c.tokens <= limit),
      }),
    );
  }
}

if (require.main === module) main();
