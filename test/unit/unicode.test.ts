import { codePointCut, graphemeBoundary } from '../../shared/unicode';
import { cutAt } from '../../shared/llm/parse';

describe('codePointCut: one rule for every cut that must not split a surrogate pair', () => {
  const text = 'ab😀cd'; // 😀 is two UTF-16 units at offsets 2-3

  it.each([
    [0, 0],
    [2, 2],
    [3, 2],
    [4, 4],
    [6, 6],
    [99, 6],
  ])('cuts %i back to %i', (max, expected) => {
    expect(codePointCut(text, max)).toBe(expected);
  });

  it('never leaves a lone surrogate in a bounded answer (cutAt uses it)', () => {
    const cut = cutAt('xx😀😀😀', 4);

    expect(cut).toBe('xx…');
    expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(cut)).toBe(false);
  });

  it('stays at or inside a grapheme cluster boundary, which it may split where graphemeBoundary does not', () => {
    const family = 'a👨‍👩‍👧b';

    expect(codePointCut(family, 3)).toBe(3);
    expect(graphemeBoundary(family, 3, 'before')).toBe(1);
  });
});
