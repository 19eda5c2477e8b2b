/**
 * The pieces of `npm run check:deploy` that are the project's own code (the checkers themselves run
 * in scripts/check-deploy.ts, in CI): intrinsics resolved to placeholder ARNs for parliament, the
 * acceptance of parliament's known false positives, and the Lambda bundle smoke test.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Template as CdkTemplate } from 'aws-cdk-lib/assertions';
import { lambdaBundles, smokeTestBundle } from '../../infra/checks/bundles';
import { isAcceptedMismatch, resolveIntrinsics, resolvePolicies, type Template } from '../../infra/checks/policies';
import { ConfigurationError } from '../../shared/errors';
import { buildStack, createSynthesisApp } from '../../infra/extagents-stack';
import { PARLIAMENT_ACCEPTED } from '../../infra/nag';

const template: Template = {
  Resources: {
    Bucket1: { Type: 'AWS::S3::Bucket' },
    Machine1: { Type: 'AWS::StepFunctions::StateMachine' },
    Policy1: {
      Type: 'AWS::IAM::Policy',
      Properties: {
        PolicyDocument: {
          Statement: [
            { Effect: 'Allow', Action: 's3:GetObject', Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': ['Bucket1', 'Arn'] }, '/runs/*']] } },
            { Effect: 'Allow', Action: 'states:StartExecution', Resource: { Ref: 'Machine1' } },
            {
              Effect: 'Allow',
              Action: 'logs:PutLogEvents',
              Resource: { 'Fn::Sub': 'arn:${AWS::Partition}:logs:${AWS::Region}:${AWS::AccountId}:log-group:x:*' },
            },
          ],
        },
      },
    },
  },
};

describe('resolvePolicies (placeholders for parliament)', () => {
  it('resolves Ref, Fn::GetAtt, Fn::Join and Fn::Sub to ARNs of the right service and type', () => {
    const [policy] = resolvePolicies(template);

    expect(policy.source).toBe('Policy1');
    expect((policy.document as { Statement: Array<{ Resource: string }> }).Statement.map((s) => s.Resource)).toEqual([
      'arn:aws:s3:::bucket1/runs/*',
      'arn:aws:states:us-east-1:123456789012:stateMachine:machine1',
      'arn:aws:logs:us-east-1:123456789012:log-group:x:*',
    ]);
  });

  it('names what it cannot resolve instead of guessing', () => {
    expect(() => resolveIntrinsics(template, { 'Fn::ImportValue': 'x' }, 'Env1')).toThrow(ConfigurationError);
    expect(() => resolveIntrinsics(template, { 'Fn::GetAtt': ['Missing', 'Arn'] }, 'Env1')).toThrow(/unknown logical id 'Missing' at Env1/);
    expect(() => resolveIntrinsics(template, { 'Fn::GetAtt': ['Bucket1', 'WebsiteURL'] }, 'Env1')).toThrow(
      /Fn::GetAtt Bucket1\.WebsiteURL \(AWS::S3::Bucket\) at Env1 has no placeholder value/,
    );
  });

  it('resolves every policy of the synthesized stack to plain strings', () => {
    const stack = buildStack(createSynthesisApp(), { surveyScheduleCron: '0 6 ? * MON *', alarmEmail: 'ops@example.com' });
    const policies = resolvePolicies(CdkTemplate.fromStack(stack).toJSON() as Template);

    expect(policies.length).toBeGreaterThan(20);
    for (const policy of policies) expect([policy.source, JSON.stringify(policy.document)]).not.toEqual([policy.source, expect.stringMatching(/Fn::|"Ref"/)]);
  });
});

describe('the parliament acceptances (infra/nag.ts PARLIAMENT_ACCEPTED)', () => {
  const invoke = (resources: string[]) => ({ Statement: [{ Effect: 'Allow', Action: 'bedrock:InvokeModel', Resource: resources }] });
  const mismatch = { action: 'bedrock:InvokeModel', required_format: 'arn:*:bedrock:*::foundation-model/*' };

  it('accepts the colon-in-model-id mismatch for a grant of named models', () => {
    const named = invoke([
      'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.meta.llama3-1-8b-instruct-v1:0',
      'arn:aws:bedrock:*::foundation-model/meta.llama3-1-8b-instruct-v1:0',
    ]);

    expect(isAcceptedMismatch(mismatch, named, PARLIAMENT_ACCEPTED)).toBe(true);
  });

  it('does not accept it for a broader grant of the same action, nor another action', () => {
    expect(isAcceptedMismatch(mismatch, invoke(['arn:aws:bedrock:*::foundation-model/*']), PARLIAMENT_ACCEPTED)).toBe(false);
    expect(isAcceptedMismatch({ action: 's3:GetObject', required_format: 'arn:*:s3:::*/*' }, invoke([]), PARLIAMENT_ACCEPTED)).toBe(false);
  });

  it("accepts the Map Run mismatch of ListExecutions for the API's grant on the workflow's state machine only", () => {
    const list = (resource: string) => ({ Statement: [{ Effect: 'Allow', Action: 'states:ListExecutions', Resource: resource }] });
    const mapRun = { action: 'states:ListExecutions', required_format: 'arn:*:states:*:*:mapRun:*/*:*' };
    const stack = buildStack(createSynthesisApp(), {});
    const api = resolvePolicies(CdkTemplate.fromStack(stack).toJSON() as Template).find((p) => p.source.startsWith('ApiHandlerRole'));

    expect(isAcceptedMismatch(mapRun, api?.document, PARLIAMENT_ACCEPTED)).toBe(true);
    expect(isAcceptedMismatch(mapRun, list('arn:aws:states:us-east-1:123456789012:stateMachine:*'), PARLIAMENT_ACCEPTED)).toBe(false);
    expect(isAcceptedMismatch(mapRun, list('*'), PARLIAMENT_ACCEPTED)).toBe(false);
  });

  it("accepts the model mismatches of CreateModelInvocationJob for the Seek function's grant on its jobs and its model only", () => {
    const create = (resources: string[]) => ({ Statement: [{ Effect: 'Allow', Action: 'bedrock:CreateModelInvocationJob', Resource: resources }] });
    const formats = ['arn:*:bedrock:*:*:custom-model/*', 'arn:*:bedrock:*::foundation-model/*'];
    const stack = buildStack(createSynthesisApp(), {});
    const seek = resolvePolicies(CdkTemplate.fromStack(stack).toJSON() as Template).find((p) => p.source.startsWith('SeekFunctionRole'));

    for (const required_format of formats) {
      const mismatch = { action: 'bedrock:CreateModelInvocationJob', required_format };
      expect(isAcceptedMismatch(mismatch, seek?.document, PARLIAMENT_ACCEPTED)).toBe(true);
      expect(
        isAcceptedMismatch(
          mismatch,
          create(['arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/*', 'arn:aws:bedrock:*::foundation-model/*']),
          PARLIAMENT_ACCEPTED,
        ),
      ).toBe(false);
      expect(isAcceptedMismatch(mismatch, create(['arn:aws:bedrock:us-east-1:123456789012:custom-model/*']), PARLIAMENT_ACCEPTED)).toBe(false);
    }
  });
});

describe('the Lambda bundle smoke test', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-smoke-test-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const hash = (n: number): string => String(n).repeat(64).slice(0, 64);
  /** An assembly with one function per bundle source, handler `index.<exportName>`. */
  const assembly = (bundles: Array<{ source: string; exportName: string }>): Template => {
    const resources: Template['Resources'] = {};
    bundles.forEach((bundle, i) => {
      mkdirSync(path.join(dir, `asset.${hash(i)}`));
      writeFileSync(path.join(dir, `asset.${hash(i)}`, 'index.js'), bundle.source);
      resources[`Fn${i}`] = {
        Type: 'AWS::Lambda::Function',
        Properties: { Code: { S3Key: `${hash(i)}.zip` }, Handler: `index.${bundle.exportName}`, Environment: { Variables: { BUCKET: { Ref: 'Bucket1' } } } },
      };
    });
    return { Resources: { ...resources, Bucket1: { Type: 'AWS::S3::Bucket' } } };
  };

  it('imports each bundle alone, finds the named export, and tells apart a missing module and a wrong export', () => {
    const bundles = lambdaBundles(
      assembly([
        { source: 'exports.handler = async () => process.env.BUCKET;', exportName: 'handler' },
        { source: "require('left-pad'); exports.handler = () => 1;", exportName: 'handler' },
        { source: 'exports.handler = () => 1;', exportName: 'planHandler' },
      ]),
      dir,
    );

    const [ok, missingModule, wrongExport] = bundles.map(smokeTestBundle);

    expect(bundles[0].environment).toEqual({ BUCKET: 'bucket1' });
    expect(ok).toMatchObject({ functionId: 'Fn0', exportName: 'handler', tokenizerRanks: false });
    expect(ok.error).toBeUndefined();
    expect(ok.importMs).toBeGreaterThan(0);
    expect(missingModule.error).toMatch(/import failed: .*Cannot find module 'left-pad'/);
    expect(wrongExport.error).toBe('export planHandler is undefined, not a function');
  });

  it('refuses a template whose function code is not a bundled asset', () => {
    const unbundled: Template = { Resources: { Fn0: { Type: 'AWS::Lambda::Function', Properties: { Code: { ZipFile: 'x' }, Handler: 'index.handler' } } } };

    expect(() => lambdaBundles(unbundled, dir)).toThrow(/Fn0: no bundled asset/);
  });
});
