/**
 * The synthesized template the local stack runs, read from local/engine/generated/stack-template.json
 * (written from the CDK app by local/generate/generate-stack-template.ts and checked against a fresh synth by
 * test/infra/stack-template.test.ts), so that running a command never synthesizes the CDK app nor
 * loads aws-cdk-lib.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { CfnTemplate } from '../../infra/intrinsics';

/** The committed file. */
export const LOCAL_STACK_TEMPLATE_PATH = path.resolve(__dirname, 'generated', 'stack-template.json');

/** The functions the local stack binds to in-process handlers, by the name it gives them. */
export type LocalFunctionName = 'prepare' | 'seek' | 'reason' | 'synchronize' | 'finalize' | 'SurveyPrepare' | 'SurveySteps' | 'SurveyAssemble';

/** What the file holds. */
export interface LocalStackTemplate {
  comment: string;
  /** Logical ids (in `template`) of the run table, the two state machines the local stack runs, and its functions. */
  logicalIds: {
    table: string;
    workflow: string;
    survey: string;
    functions: Record<LocalFunctionName, string>;
  };
  /** The template's resources, each with only the properties the local engine reads. */
  template: CfnTemplate & { Resources: NonNullable<CfnTemplate['Resources']> };
}

let cached: LocalStackTemplate | undefined;

/**
 * The committed template (read once per process).
 * @throws Error when the file is missing or not JSON (a damaged checkout: regenerate it with
 *   `npx tsx local/generate/generate-stack-template.ts`).
 */
export function localStackTemplate(): LocalStackTemplate {
  cached ??= JSON.parse(readFileSync(LOCAL_STACK_TEMPLATE_PATH, 'utf8')) as LocalStackTemplate;
  return cached;
}
