/**
 * Run option `seekMode` (shared/config.ts): how the seeking agents' first calls are made, on demand
 * or as batch jobs (shared/pipeline/seek-batch.ts). A leaf module, so the workflow and survey
 * schemas can name the modes without importing the run options (and what those import).
 */
export const SEEK_MODES = ['on-demand', 'batch'] as const;

/** One of {@link SEEK_MODES}. */
export type SeekMode = (typeof SEEK_MODES)[number];
