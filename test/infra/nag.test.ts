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
import * as s3 from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import { buildStack, createSynthesisApp, type BuildStackOptions } from '../../infra/extagents-stack';
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
    expect(nagFindings({ modelSpec: 'openai:llama3', openaiBaseUrl: 'https://llm.example.com/v1', openaiApiKeySecretName: 'extagents/openai-api-key' })).toEqual([]);
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
