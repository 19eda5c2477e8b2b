/**
 * The Markdown reader: a note's readable text, parsed with markdown-it (CommonMark with GFM tables;
 * chosen over the unified/remark family, which is ESM-only, which this CommonJS project cannot load
 * in its tests). The markup is not text: `#` of headings, emphasis markers, link targets, the
 * pipes and rule of tables, fences. Headings, paragraphs, list items (`- `), table rows (cells joined
 * by ` | `), block quotes and code blocks (kept as written) are blocks separated by a blank line; raw
 * HTML blocks are read by the HTML reader. Locations: from each heading on, its heading path, with the
 * heading's 1-based source line (`sourceLine`).
 * Front matter (YAML between `---` lines, TOML between `+++` lines, at the very start of the file, as
 * Jekyll, Hugo and most static site generators write it) is metadata, never text nor a heading: it is
 * left out of the text, and its `title`, when it has one, is the document's title.
 * Source: https://markdown-it.github.io/markdown-it/ (Token, `map`: the token's source lines),
 * https://gohugo.io/content-management/front-matter/ (the YAML and TOML delimiters)
 */
import MarkdownIt from 'markdown-it';
import { parse as parseYaml } from 'yaml';
import { TextBlocks } from './blocks';
import { readHtml } from './html';
import type { DocumentLocation } from './types';

type Token = ReturnType<InstanceType<typeof MarkdownIt>['parse']>[number];

/**
 * One parser for every document: markdown-it's parser holds no per-document state. `html: true` keeps
 * raw HTML blocks as tokens (read as HTML, never as markup text); `maxNesting` 1000 (markdown-it's
 * default, 100, silently drops what lies deeper, e.g. a quote nested 100 levels).
 */
const parser = new MarkdownIt({ html: true, maxNesting: 1000 });

/** The opening line of front matter: `---` (YAML) or `+++` (TOML), the file's first line. */
const FRONT_MATTER_OPEN = /^\uFEFF?(---|\+\+\+)[ \t]*\r?\n/;
/** The closing line: the same delimiter (YAML may also close with `...`). */
const FRONT_MATTER_CLOSE = { '---': /^(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/m, '+++': /^\+\+\+[ \t]*(?:\r?\n|$)/m } as const;

/**
 * Split front matter off a Markdown document: a first line `---` (YAML) or `+++` (TOML) up to the
 * next line of the same delimiter (YAML may also close with `...`); without a closing line there is
 * no front matter (the `---` is Markdown's thematic break).
 * @returns `body`: the document with the front matter replaced by as many empty lines (so heading
 *   source lines stay those of the file); `title`: its `title` when it is a non-empty string (YAML
 *   parsed with the `yaml` package; TOML: a top-level `title = "…"` or `'…'` line, the only key read,
 *   without a TOML parser). Never throws: unparsable front matter is still left out, without a title.
 */
export function splitFrontMatter(markdown: string): { body: string; title?: string } {
  const open = FRONT_MATTER_OPEN.exec(markdown);
  if (!open) return { body: markdown };
  const delimiter = open[1] as keyof typeof FRONT_MATTER_CLOSE;
  const rest = markdown.slice(open[0].length);
  const close = FRONT_MATTER_CLOSE[delimiter].exec(rest);
  if (!close) return { body: markdown };
  const content = rest.slice(0, close.index);
  const length = open[0].length + close.index + close[0].length;
  const lines = markdown.slice(0, length).split('\n').length - 1 + (close[0].endsWith('\n') ? 0 : 1);
  const body = '\n'.repeat(lines) + markdown.slice(length);
  let title: unknown;
  if (delimiter === '---') {
    try {
      title = (parseYaml(content, { maxAliasCount: 100, logLevel: 'silent' }) as { title?: unknown } | null)?.title;
    } catch {
      title = undefined;
    }
  } else {
    // Top-level keys come before the first [table] header.
    const top = content.split(/^\s*\[/m)[0];
    const line = /^\s*title\s*=\s*(?:"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)')\s*(?:#.*)?$/m.exec(top);
    title = line ? (line[2] ?? line[1].replace(/\\(["\\])/g, '$1')) : undefined;
  }
  const clean = typeof title === 'string' ? title.replace(/\s+/g, ' ').trim() : '';
  return { body, ...(clean !== '' && { title: clean }) };
}

/**
 * Read a Markdown document (already decoded text). Never throws: every input is some Markdown.
 * @returns the text (UTF-16 offsets of citations are offsets of it), its locations, and `title` from
 *   the front matter when it names one (front matter is never part of the text).
 */
export function readMarkdown(markdown: string): { text: string; locations: DocumentLocation[]; title?: string } {
  const { body, title } = splitFrontMatter(markdown);
  const tokens = parser.parse(body, {});
  const blocks = new TextBlocks();
  let row: string[] | undefined;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    switch (token.type) {
      case 'heading_open': {
        const inline = tokens[i + 1];
        blocks.heading(Number(token.tag.slice(1)), inline?.type === 'inline' ? inlineText(inline) : '', token.map ? { sourceLine: token.map[0] + 1 } : {});
        i += 2; // inline, heading_close
        break;
      }
      case 'tr_open':
        blocks.flush();
        if (token.map) blocks.source({ sourceLine: token.map[0] + 1 });
        row = [];
        break;
      case 'paragraph_open':
        if (token.map) blocks.source({ sourceLine: token.map[0] + 1 });
        break;
      case 'tr_close':
        blocks.inline((row ?? []).join(' | '));
        blocks.flush();
        row = undefined;
        break;
      case 'inline':
        if (row) row.push(inlineText(token).replace(/\s+/g, ' ').trim());
        else blocks.inline(inlineText(token));
        break;
      case 'list_item_open':
        blocks.flush();
        if (token.map) blocks.source({ sourceLine: token.map[0] + 1 });
        blocks.inline('- ');
        break;
      case 'paragraph_close':
      case 'list_item_close':
      case 'blockquote_close':
        blocks.flush();
        break;
      case 'fence':
      case 'code_block':
        blocks.flush();
        if (token.map) blocks.source({ sourceLine: token.map[0] + 1 });
        blocks.preformatted(token.content);
        break;
      case 'html_block':
        blocks.flush();
        for (const block of readHtml(token.content).text.split('\n\n')) {
          blocks.inline(block);
          blocks.flush();
        }
        break;
      default:
        break;
    }
  }
  return { ...blocks.result(), ...(title !== undefined && { title }) };
}

/** The text of an inline token: its text and code spans, images by their alt text; markup and raw HTML dropped. */
function inlineText(token: Token): string {
  let text = '';
  for (const child of token.children ?? []) {
    if (child.type === 'text' || child.type === 'code_inline') text += child.content;
    else if (child.type === 'softbreak') text += ' ';
    else if (child.type === 'hardbreak') text += '\n';
    else if (child.type === 'image') text += child.content;
  }
  return text;
}
