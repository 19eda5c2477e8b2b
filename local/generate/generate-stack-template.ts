/**
 * The part of the synthesized CDK template the local stack runs (local/engine/stack.ts), written to
 * local/engine/generated/stack-template.json (read by local/engine/stack-template.ts) so that no command synthesizes the CDK app or loads aws-cdk-lib
 * at run time (about a second and 60 MB of modules per process). Like docs/openapi.yaml, the file is
 * generated and committed, and a test fails when it differs from a fresh synth:
 *
 *   npx tsx local/generate/generate-stack-template.ts           write the file
 *   npx tsx local/generate/generate-stack-template.ts --check   exit 1 when the committed file is out of date
 *
 * The state-machine definitions do not depend on the model spec (only IAM grants and Lambda
 * environments do, which the local run does not use), so one synth with the offline model serves
 * every spec.
 */
import type { CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { HANDLER_NAMES } from '../../infra/extagents-function';
import { buildStack, createSynthesisApp } from '../../infra/extagents-stack';
import type { CfnResource } from '../../infra/intrinsics';
import { LOCAL_STACK_TEMPLATE_PATH, type LocalStackTemplate } from '../engine/stack-template';
import { writeOrCheckGenerated } from './generated-file';

/** Properties kept per resource type: what the local engine reads (definitions, tables, names). */
const KEPT_PROPERTIES: Record<string, readonly string[]> = {
  'AWS::StepFunctions::StateMachine': ['DefinitionString', 'Definition', 'DefinitionSubstitutions'],
  'AWS::DynamoDB::Table': [
    'TableName',
    'KeySchema',
    'AttributeDefinitions',
    'GlobalSecondaryIndexes',
    'LocalSecondaryIndexes',
    'BillingMode',
    'TimeToLiveSpecification',
  ],
  'AWS::S3::Bucket': ['BucketName'],
};

/** Synthesize the stack (offline model, no bundling) and keep what the local stack runs. */
export function buildLocalStackTemplate(): LocalStackTemplate {
  const stack = buildStack(createSynthesisApp(), { modelSpec: 'extractive' });
  const template = Template.fromStack(stack).toJSON() as { Resources: Record<string, CfnResource> };
  const logicalId = (construct: { node: { defaultChild?: unknown } }): string => stack.getLogicalId(construct.node.defaultChild as CfnElement);
  const resources: Record<string, CfnResource> = {};
  for (const [id, resource] of Object.entries(template.Resources)) {
    const kept = KEPT_PROPERTIES[resource.Type];
    const properties =
      kept === undefined ? undefined : Object.fromEntries(kept.filter((k) => resource.Properties?.[k] !== undefined).map((k) => [k, resource.Properties?.[k]]));
    resources[id] = { Type: resource.Type, ...(properties !== undefined && Object.keys(properties).length > 0 && { Properties: properties }) };
  }
  return {
    comment:
      'Generated from the CDK app by `npx tsx local/generate/generate-stack-template.ts`; do not edit by hand. test/infra/stack-template.test.ts fails when it is out of date.',
    logicalIds: {
      table: logicalId(stack.table),
      workflow: logicalId(stack.stateMachine),
      survey: logicalId(stack.surveys.surveyStateMachine),
      functions: {
        ...Object.fromEntries(HANDLER_NAMES.map((name) => [name, logicalId(stack.functions[name])])),
        SurveyPrepare: logicalId(stack.surveys.prepareFunction),
        SurveySteps: logicalId(stack.surveys.stepsFunction),
        SurveyAssemble: logicalId(stack.surveys.assembleFunction),
      } as LocalStackTemplate['logicalIds']['functions'],
    },
    template: { Resources: resources },
  };
}

/** The file's text: stable JSON, two-space indent, a final newline. */
export function renderLocalStackTemplate(): string {
  return `${JSON.stringify(buildLocalStackTemplate(), null, 2)}\n`;
}

if (require.main === module) writeOrCheckGenerated(LOCAL_STACK_TEMPLATE_PATH, renderLocalStackTemplate(), 'npx tsx local/generate/generate-stack-template.ts');
