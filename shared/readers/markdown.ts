/**
 * The Markdown reader: a note's readable text, parsed with markdown-it (CommonMark with GFM tables;
 * chosen over the unified/remark family, which is ESM-only, which this CommonJS project cannot load
 * in its tests). The markup is not text: `#` of headings, emphasis markers, link targets, the
 * pipes and rule of tables, fences. Headings, paragraphs, list items (`- `), table rows (cells joined
 * by ` | `), block quotes and code blocks (kept as written) are blocks separated by a blank line; raw
 * HTML blocks are read by the HTML reader. Locations: from each heading on, its heading path, with the
 * heading's 1-based source line (`sourceLine`).
 * Source: https://markdown-it.github.io/markdown-it/ (Token, `map`: the token's source lines)
 */
import MarkdownIt from 'markdown-it';
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

/** Read a Markdown document (already decoded text). Never throws: every input is some Markdown. */
export function readMarkdown(markdown: string): { text: string; locations: DocumentLocation[] } {
  const tokens = parser.parse(markdown, {});
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
        row = [];
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
        blocks.inline('- ');
        break;
      case 'paragraph_close':
      case 'list_item_close':
      case 'blockquote_close':
        blocks.flush();
        break;
      case 'fence':
      case 'code_block':
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
  return blocks.result();
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
