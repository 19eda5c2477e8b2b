/**
 * local/engine/generated/stack-template.json, which the local stack runs instead of synthesizing the CDK
 * app at run time: the committed file is what a fresh synth gives (regenerate with
 * `npx tsx local/generate/generate-stack-template.ts`), its definitions do not depend on the model spec, and
 * loading the local stack does not load aws-cdk-lib.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { buildStack, createSynthesisApp, DEFAULT_MODEL_SPEC } from '../../infra/extagents-stack';
import { renderLocalStackTemplate } from '../../local/generate/generate-stack-template';
import { LOCAL_STACK_TEMPLATE_PATH, localStackTemplate } from '../../local/engine/stack-template';
import { resolveStateMachineDefinition } from '../../local/engine/definition';
import { libraryRejections } from '../../local/engine/engine';

const ROOT = path.resolve(__dirname, '..', '..');

describe('the generated stack template of the local stack', () => {
  jest.setTimeout(60_000);

  it('is the committed file (run `npx tsx local/generate/generate-stack-template.ts` after changing infra/)', () => {
    expect(readFileSync(LOCAL_STACK_TEMPLATE_PATH, 'utf8')).toBe(renderLocalStackTemplate());
  });

  it('holds the same state-machine definitions as a synth with the default Bedrock model', () => {
    const bedrock = Template.fromStack(buildStack(createSynthesisApp(), { modelSpec: DEFAULT_MODEL_SPEC })).toJSON() as {
      Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
    };
    const { template } = localStackTemplate();
    const machines = Object.entries(bedrock.Resources).filter(([, r]) => r.Type === 'AWS::StepFunctions::StateMachine');

    expect(machines.length).toBe(4);
    for (const [id, machine] of machines)
      expect([id, template.Resources[id]?.Properties?.DefinitionString]).toEqual([id, machine.Properties?.DefinitionString]);
  });

  it('holds definitions aws-local-stepfunctions accepts (the local stack skips that validation at run time)', () => {
    const { template, logicalIds } = localStackTemplate();
    for (const machine of [logicalIds.workflow, logicalIds.survey]) {
      const { definition } = resolveStateMachineDefinition(template, machine, { tableNames: { [logicalIds.table]: 'extagents-local' } });
      expect([machine, libraryRejections(definition)]).toEqual([machine, []]);
    }
    // The check is live: a transition to a state that does not exist is rejected.
    const { definition } = resolveStateMachineDefinition(template, logicalIds.workflow, { tableNames: {} });
    const broken = { ...definition, StartAt: 'NoSuchState' };
    expect(libraryRejections(broken).join(' ')).toMatch(/rejects the state machine/);
  });

  it('lets the local stack and the CLI load without aws-cdk-lib', () => {
    const probe = [
      "require('tsx/cjs/api').register();",
      "require('./local/engine/run.ts'); require('./local/services/serve.ts'); require('./local/cli/survey-command.ts');",
      "process.stdout.write(JSON.stringify(Object.keys(require.cache).filter((file) => file.includes('/node_modules/aws-cdk-lib/')).length));",
    ].join('\n');

    const loaded = execFileSync(process.execPath, ['-e', probe], { cwd: ROOT, encoding: 'utf8' });

    expect(JSON.parse(loaded)).toBe(0);
  });
});
