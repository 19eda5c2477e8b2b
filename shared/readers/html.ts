/**
 * The HTML reader: a page's readable text, parsed with parse5 (the WHATWG HTML parsing algorithm,
 * what browsers do; chosen over htmlparser2, whose current releases are ESM-only, which this
 * CommonJS project cannot load in its tests, and over regular expressions, which no HTML survives).
 *
 * - Not text: `<head>` (its `<title>` becomes the document's title), scripts, styles, templates, SVG
 *   and MathML, forms and their controls, embedded frames and objects, navigation (`<nav>`, and
 *   `role` navigation, banner, contentinfo, search, complementary), the page's own `<header>` and
 *   `<footer>` (those outside any article, aside, main, nav or section), and anything `hidden` or
 *   `aria-hidden="true"`.
 * - Blocks (paragraphs, headings, list items, table rows, …) are separated by a blank line; a list
 *   item starts with `- `; a table row is its cells joined by ` | `; `<pre>` keeps its white space;
 *   `<br>` is a line break.
 * - Locations: from each heading `<h1>`…`<h6>` on, its heading path, with the heading element's
 *   character offset in the source (`sourceOffset`).
 * Source: https://parse5.js.org/ (sourceCodeLocationInfo), https://html.spec.whatwg.org/#parsing
 */
import { parse } from 'parse5';
import type { DefaultTreeAdapterMap } from 'parse5';
import { TextBlocks } from './blocks';
import type { DocumentLocation } from './types';

type Node = DefaultTreeAdapterMap['node'];
type Element = DefaultTreeAdapterMap['element'];

/** Elements whose content is never text. */
const SKIPPED = new Set([
  'head',
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'math',
  'iframe',
  'object',
  'embed',
  'canvas',
  'video',
  'audio',
  'form',
  'button',
  'select',
  'option',
  'input',
  'textarea',
  'label',
  'nav',
  'dialog',
  'map',
]);
/** ARIA landmark roles of page chrome, not content. */
const SKIPPED_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'search', 'complementary', 'menu', 'menubar', 'toolbar']);
/** Elements that end the block before and after them. */
const BLOCKS = new Set([
  'p',
  'div',
  'section',
  'article',
  'main',
  'aside',
  'header',
  'footer',
  'address',
  'blockquote',
  'figure',
  'figcaption',
  'ul',
  'ol',
  'dl',
  'dt',
  'dd',
  'li',
  'table',
  'caption',
  'thead',
  'tbody',
  'tfoot',
  'hr',
  'details',
  'summary',
  'body',
  'html',
  'center',
  'fieldset',
  'legend',
]);
const HEADING = /^h([1-6])$/;

/** What an HTML page reads as: its text, locations and title (`<title>`), if any. */
export interface HtmlText {
  text: string;
  locations: DocumentLocation[];
  title?: string;
}

/**
 * Elements that hold no content (void), whose end tag may be left out (closed by what follows), or
 * that a parser closes when another of them starts (`a`, `nobr`, `button`): no nesting counted.
 */
const NOT_NESTING = new Set(
  'area base br col embed hr img input link meta source track wbr param keygen p li dt dd tr td th option optgroup rb rt rp tbody thead tfoot colgroup caption html head body a nobr button'.split(
    ' ',
  ),
);

/**
 * The most elements open at once in a page, by a linear scan of its tags (elements that nest only:
 * void elements and those whose end tag may be left out are not counted), stopping once over `limit`.
 * An estimate, but a cheap one: parse5's tree building is quadratic in the depth (200,000 nested
 * `<div>` took minutes) and the reader's walk overflows the stack in the thousands.
 */
export function htmlNestingDepth(html: string, limit: number): number {
  let depth = 0;
  let max = 0;
  for (const m of html.matchAll(/<(\/?)([A-Za-z][A-Za-z0-9-]*)[^<>]*?(\/?)>/g)) {
    const name = m[2].toLowerCase();
    if (NOT_NESTING.has(name) || m[3] === '/') continue;
    if (m[1] === '/') depth = Math.max(0, depth - 1);
    else if (++depth > max && (max = depth) > limit) return max;
  }
  return max;
}

/** A page nested deeper than this (`htmlNestingDepth`) is skipped as "markup nested too deeply", unread. */
export const MAX_HTML_DEPTH = 2_000;

/** Read an HTML document (already decoded text). Never throws: parse5 recovers from any markup, as browsers do. */
export function readHtml(html: string): HtmlText {
  const document = parse(html, { sourceCodeLocationInfo: true });
  const blocks = new TextBlocks();
  let title: string | undefined;
  const visit = (node: Node, pre: boolean): void => {
    if (node.nodeName === '#text') {
      const value = (node as DefaultTreeAdapterMap['textNode']).value;
      if (pre) blocks.preformatted(value);
      else blocks.inline(value);
      return;
    }
    if (!('tagName' in node)) {
      for (const child of childrenOf(node)) visit(child, pre);
      return;
    }
    const element = node as Element;
    const tag = element.tagName;
    if (tag === 'head') {
      const titleElement = element.childNodes.find((c): c is Element => 'tagName' in c && c.tagName === 'title');
      if (titleElement && title === undefined) title = textContent(titleElement).replace(/\s+/g, ' ').trim() || undefined;
      return;
    }
    if (SKIPPED.has(tag) || isHidden(element)) return;
    const heading = HEADING.exec(tag);
    if (heading) {
      blocks.heading(Number(heading[1]), textContent(element), { sourceOffset: element.sourceCodeLocation?.startOffset });
      return;
    }
    if (tag === 'br') return blocks.lineBreak();
    if (tag === 'pre') {
      blocks.flush();
      blocks.source({ sourceOffset: element.sourceCodeLocation?.startOffset });
      blocks.preformatted(textContent(element));
      return;
    }
    if (tag === 'tr') {
      blocks.flush();
      blocks.source({ sourceOffset: element.sourceCodeLocation?.startOffset });
      const cells = element.childNodes.filter((c): c is Element => 'tagName' in c && (c.tagName === 'td' || c.tagName === 'th'));
      blocks.inline(cells.map((cell) => textContent(cell).replace(/\s+/g, ' ').trim()).join(' | '));
      blocks.flush();
      return;
    }
    if (tag === 'img') {
      const alt = element.attrs.find((a) => a.name === 'alt')?.value;
      if (alt) blocks.inline(` ${alt} `);
      return;
    }
    // The page's own header and footer (not those of an article or section) are its banner and
    // contentinfo landmarks (HTML-AAM): page chrome, not text.
    if ((tag === 'header' || tag === 'footer') && !insideSectioning(element)) return;
    const block = BLOCKS.has(tag);
    if (block) blocks.flush();
    if (block) blocks.source({ sourceOffset: element.sourceCodeLocation?.startOffset });
    if (tag === 'li') blocks.inline('- ');
    for (const child of childrenOf(element)) visit(child, pre);
    if (block) blocks.flush();
  };
  visit(document, false);
  return { ...blocks.result(), ...(title !== undefined && { title }) };
}

/** Sectioning content and main above an element (then its header/footer are the section's, kept). */
function insideSectioning(element: Element): boolean {
  for (let parent = element.parentNode; parent && 'tagName' in parent; parent = parent.parentNode) {
    if (['article', 'aside', 'main', 'nav', 'section'].includes((parent as Element).tagName)) return true;
  }
  return false;
}

function childrenOf(node: Node): Node[] {
  if (node.nodeName === 'template') return [];
  return 'childNodes' in node ? (node.childNodes as Node[]) : [];
}

/** `hidden`, `aria-hidden="true"`, an inline `display: none`, or a chrome landmark role. */
function isHidden(element: Element): boolean {
  for (const { name, value } of element.attrs) {
    if (name === 'hidden') return true;
    if (name === 'aria-hidden' && value.trim().toLowerCase() === 'true') return true;
    if (name === 'role' && SKIPPED_ROLES.has(value.trim().toLowerCase())) return true;
    if (name === 'style' && /display\s*:\s*none/i.test(value)) return true;
  }
  return false;
}

/** The text of an element's subtree, without the content of skipped or hidden elements. */
function textContent(node: Node): string {
  if (node.nodeName === '#text') return (node as DefaultTreeAdapterMap['textNode']).value;
  if ('tagName' in node) {
    const element = node as Element;
    if (element.tagName !== 'title' && (SKIPPED.has(element.tagName) || isHidden(element))) return '';
    if (element.tagName === 'br') return '\n';
    if (element.tagName === 'img') return element.attrs.find((a) => a.name === 'alt')?.value ?? '';
  }
  return childrenOf(node).map(textContent).join('');
}
