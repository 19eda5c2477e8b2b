/**
 * The `SurveyModel` port: the survey roles of the reasoning agent (outline, section writer). The
 * seeking role is the existing `AgentModel.seek` (shared/ports.ts), unchanged: for a survey its query
 * is the topic or a section's scope. Implementations: `ExtractiveSurveyModel` (offline, not an LLM:
 * an extractive survey of selected, ordered, cited corpus sentences) and `LlmSurveyModel` (prompts +
 * lenient parsing over a `ChatModel`).
 */
import type { Message, RoleUsage } from '../types';
import type { Outline, SurveySource } from './types';

/** What the reasoning agent reads in one outline step (knowledge-accumulating reasoning). */
export interface OutlineRequest {
  topic: string;
  /** The top-k messages of the pool, best first, fitted to the outline token budget. */
  messages: Message[];
  /** At most this many sections. */
  maxSections: number;
  /** True once the whole pool was read without coverage: the agent must draft an outline anyway. */
  force: boolean;
}

/**
 * The outline, or the structured "the knowledge does not yet cover the topic" (KAR doubles k). A
 * union: an outline exactly when covered. Covered is always the case when the request was forced
 * (unless there is nothing to outline).
 */
export type OutlineResult =
  | { covered: true /** 1..maxSections sections. */; outline: Outline; usage: RoleUsage; warnings: string[] }
  | { covered: false; outline: null; usage: RoleUsage; warnings: string[] };

/** What the writer reads for one section. */
export interface SectionRequest {
  topic: string;
  /** The whole outline (shared context) and the position of this section in it (0-based). */
  outline: Outline;
  section: number;
  /** The section's top-k messages after re-ranking for its scope, best first, fitted to the budget. */
  messages: Message[];
  /** The sources the messages came from (for titles); the writer may cite only these ids. */
  sources: SurveySource[];
  /** Target length of the section in words. */
  targetWords: number;
  /**
   * Sentences (plain text, citations removed) already written in earlier sections: the writer must
   * not repeat them (sections are written in outline order for this reason).
   */
  avoid: string[];
}

/** A drafted section: Markdown prose citing sources as `[id]` (checked afterwards). */
export interface SectionDraft {
  text: string;
  usage: RoleUsage;
  warnings: string[];
}

/** The survey roles of the reasoning agent. */
export interface SurveyModel {
  /** Human-readable description (goes into the metadata). */
  readonly description: string;
  /** True for the offline extractive reader (the survey is extractive; the metadata says so). */
  readonly extractive: boolean;
  /** Draft the outline from the top-k messages, or say the knowledge does not yet cover the topic. */
  outline(request: OutlineRequest): Promise<OutlineResult>;
  /** Draft one section from its messages, citing sources as `[id]`. */
  writeSection(request: SectionRequest): Promise<SectionDraft>;
}
