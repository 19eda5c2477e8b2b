/**
 * cdk-nag's AwsSolutions pack over the whole stack. cdk-nag 3 is a CDK policy validation plugin
 * (`Validations.of(app).addPlugins(...)`): synthesis fails with a report of every unacknowledged
 * finding (errors and warnings); acknowledgments carry their reason in code (infra/nag.ts and next to
 * the resources). Source: https://github.com/cdklabs/cdk-nag (README, MIGRATION.md).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Validations, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import { buildStack, createSynthesisApp, DEFAULT_SEEK_RESERVED_CONCURRENCY, type BuildStackOptions } from '../../infra/extagents-stack';
import { iamWildcardFindings } from '../../infra/nag';

interface ValidationReport {
  pluginReports: Array<{
    pluginName: string;
    violations: Array<{ ruleName: string; severity: string; violatingConstructs: Array<{ constructPath: string }> }>;
  }>;
}

/** Synthesize the stack with the AwsSolutions pack; returns the findings as `severity rule at path` lines. */
function nagFindings(options: BuildStackOptions = {}, extend?: (stack: Stack) => void): string[] {
  const outdir = mkdtempSync(path.join(tmpdir(), 'extagents-nag-'));
  try {
    const app = createSynthesisApp(outdir);
    const stack = buildStack(app, { env: { account: '123456789012', region: 'us-west-2' }, ...options });
    extend?.(stack);
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    try {
      app.synth();
      return [];
    } catch (error) {
      const reportFile = path.join(outdir, 'validation-report.json');
      let report: ValidationReport;
      try {
        report = JSON.parse(readFileSync(reportFile, 'utf8')) as ValidationReport;
      } catch {
        throw error; // not a validation failure
      }
      return report.pluginReports.flatMap((plugin) =>
        plugin.violations.flatMap((v) => v.violatingConstructs.map((c) => `${v.severity} ${v.ruleName} at ${c.constructPath}`)),
      );
    }
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

describe('the AwsSolutions nag pack', () => {
  jest.setTimeout(60_000);

  it('reports no unacknowledged error or warning for the default stack', () => {
    expect(nagFindings()).toEqual([]);
  });

  it('reports none either with the alarm topic and a plain foundation-model id', () => {
    expect(nagFindings({ alarmEmail: 'ops@example.com', modelSpec: 'bedrock:amazon.nova-lite-v1:0' })).toEqual([]);
  });

  it('reports none either for an OpenAI-compatible model with its key in Secrets Manager', () => {
    expect(
      nagFindings({ modelSpec: 'openai:llama3', openaiBaseUrl: 'https://llm.example.com/v1', openaiApiKeySecretName: 'extagents/openai-api-key' }),
    ).toEqual([]);
  });

  it('does report a resource nobody reviewed (the check is live)', () => {
    // Act
    const findings = nagFindings({}, (stack) => new s3.Bucket(stack, 'Unreviewed'));
    // Assert
    expect(findings).toEqual(
      expect.arrayContaining(['error AwsSolutions-S1 at ExtAgents/Unreviewed/Resource', 'error AwsSolutions-S10 at ExtAgents/Unreviewed/Resource']),
    );
  });
});

describe('the IAM wildcard findings the acknowledgments match', () => {
  it('names wildcard actions and flattened resources as cdk-nag does, with their statements actions', () => {
    // Act
    const findings = iamWildcardFindings({
      Statement: [
        { Effect: 'Allow', Action: ['s3:GetObject*', 's3:List*'], Resource: [{ 'Fn::Join': ['', [{ 'Fn::GetAtt': ['Bucket1', 'Arn'] }, '/runs/*']] }] },
        { Effect: 'Allow', Action: 'xray:PutTraceSegments', Resource: '*' },
        { Effect: 'Allow', Action: 's3:PutObject', Resource: { Ref: 'Bucket1' } },
        { Effect: 'Deny', Action: 's3:*', Resource: '*' },
      ],
    });
    // Assert
    expect([...findings.entries()]).toEqual([
      ['Action::s3:GetObject*', ['s3:GetObject*', 's3:List*']],
      ['Action::s3:List*', ['s3:GetObject*', 's3:List*']],
      ['Resource::<Bucket1.Arn>/runs/*', ['s3:GetObject*', 's3:List*']],
      ['Resource::*', ['xray:PutTraceSegments']],
    ]);
  });
});

describe('the checkov acknowledgments written into the template', () => {
  interface CfnResource {
    Type: string;
    Properties?: { ReservedConcurrentExecutions?: number };
    Metadata?: { checkov?: { skip?: Array<{ id: string; comment: string }> } };
  }
  const resourcesOf = (options: BuildStackOptions = {}): Record<string, CfnResource> => {
    const app = createSynthesisApp();
    const stack = buildStack(app, { env: { account: '123456789012', region: 'us-west-2' }, ...options });
    return (Template.fromStack(stack).toJSON() as { Resources: Record<string, CfnResource> }).Resources;
  };
  const skipsOf = (resource: CfnResource): string[] => (resource.Metadata?.checkov?.skip ?? []).map((s) => s.id);

  it('gives every Lambda function either reserved concurrency or a written reason for CKV_AWS_115, never both', () => {
    const functions = Object.entries(resourcesOf()).filter(([, r]) => r.Type === 'AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThan(10);
    for (const [id, fn] of functions) {
      const reserved = fn.Properties?.ReservedConcurrentExecutions;
      const acknowledged = skipsOf(fn).includes('CKV_AWS_115');
      // Exactly one of the two.
      expect([id, reserved !== undefined]).toEqual([id, !acknowledged]);
      for (const skip of fn.Metadata?.checkov?.skip ?? []) expect(skip.comment.length).toBeGreaterThan(20);
    }
    const [, seek] = functions.find(([id]) => id.startsWith('SeekFunction')) ?? [];
    expect(seek?.Properties?.ReservedConcurrentExecutions).toBe(DEFAULT_SEEK_RESERVED_CONCURRENCY);
  });

  it('lets seekReservedConcurrency change the Seek reservation, 0 dropping it for the acknowledged bound', () => {
    const seekOf = (value: number): CfnResource | undefined =>
      Object.entries(resourcesOf({ seekReservedConcurrency: value })).find(
        ([id, r]) => r.Type === 'AWS::Lambda::Function' && id.startsWith('SeekFunction'),
      )?.[1];
    expect(seekOf(12)?.Properties?.ReservedConcurrentExecutions).toBe(12);
    expect(seekOf(0)?.Properties?.ReservedConcurrentExecutions).toBeUndefined();
    expect(skipsOf(seekOf(0) as CfnResource)).toContain('CKV_AWS_115');
    expect(() => resourcesOf({ seekReservedConcurrency: -1 })).toThrow(/seekReservedConcurrency must be a non-negative integer/);
  });

  it('writes a stack-wide acknowledgment only on the resource types it is about', () => {
    for (const [id, resource] of Object.entries(resourcesOf())) {
      const skips = skipsOf(resource);
      if (skips.includes('CKV_AWS_117')) expect([id, resource.Type]).toEqual([id, 'AWS::Lambda::Function']);
      if (skips.includes('CKV_AWS_158')) expect([id, resource.Type]).toEqual([id, 'AWS::Logs::LogGroup']);
      if (resource.Type === 'AWS::S3::Bucket' && id.startsWith('Bucket')) expect(skips).toEqual([]);
    }
  });
});
