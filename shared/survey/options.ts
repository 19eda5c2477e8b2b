/**
 * Survey options: defaults and bounds, validated with zod (a bad value is a ConfigurationError
 * naming the field).
 */
import { z } from 'zod';
import { ConfigurationError } from '../errors';
import type { SurveyOptions } from './types';
import { issuesText } from '../validation';
import { RunOptionsSchema } from '../config';

export const SurveyOptionsSchema = z
  .object({
    targetWords: z.number().int().min(200).max(50_000).default(3000),
    maxSections: z.number().int().min(1).max(20).default(6),
    // Small chunks by default: the seeking agent returns a few sentences per chunk, and a survey
    // needs many messages (about four 300-token abstracts per chunk).
    chunkTokens: z.number().int().min(64).max(200_000).default(1200),
    // Seeking agents at once: the run option's meaning, so its range and default (one place).
    concurrency: RunOptionsSchema.shape.concurrency,
    // The seeking model's quota and seek latency: the run options' meaning (shared/quota.ts), so the
    // survey's seeking Maps are quota-aware as the QA run's.
    quotaRequestsPerMinute: RunOptionsSchema.shape.quotaRequestsPerMinute,
    quotaTokensPerMinute: RunOptionsSchema.shape.quotaTokensPerMinute,
    seekLatencySeconds: RunOptionsSchema.shape.seekLatencySeconds,
    sectionConcurrency: z.number().int().min(1).max(20).default(2),
    outlineBudgetTokens: z.number().int().min(100).max(1_000_000).default(16_000),
    writerBudgetTokens: z.number().int().min(100).max(1_000_000).default(8_000),
    minSectionMessages: z.number().int().min(0).max(1000).default(8),
    rounds: z.number().int().min(1).max(2).default(2),
    // The run option's meaning: the survey's first seeking round as batch jobs (shared/pipeline/seek-batch.ts).
    seekMode: RunOptionsSchema.shape.seekMode,
  })
  .strict();

export type SurveyOptionsInput = z.input<typeof SurveyOptionsSchema>;

/**
 * Validate survey options, filling defaults.
 * @throws ConfigurationError naming each invalid field.
 */
export function parseSurveyOptions(input: unknown): SurveyOptions {
  const result = SurveyOptionsSchema.safeParse(input ?? {});
  if (!result.success) {
    throw new ConfigurationError(`Invalid survey options: ${issuesText(result.error, '(options)')}`);
  }
  return result.data;
}
