/**
 * The deployment's default quota of the seeking model (CDK context `quotaRequestsPerMinute`,
 * `quotaTokensPerMinute`, infra/app.ts -> `seekQuota`): set on the workflow's functions, which Prepare
 * reads (lambdas/adapters/env.ts) to derive each run's seeking MaxConcurrency (shared/quota.ts).
 */
import { Template } from 'aws-cdk-lib/assertions';
import { buildStack, createSynthesisApp } from '../../infra/extagents-stack';

jest.setTimeout(60_000);

describe('the seeking model\'s quota as a deployment setting', () => {
  it('goes to the Prepare function\'s environment', () => {
    const template = Template.fromStack(buildStack(createSynthesisApp(), { seekQuota: { requestsPerMinute: 800, tokensPerMinute: 600_000 } }));

    const prepare = Object.entries(template.findResources('AWS::Lambda::Function')).find(([id]) => id.startsWith('PrepareFunction'))?.[1] as
      | { Properties: { Environment: { Variables: Record<string, unknown> } } }
      | undefined;

    expect(prepare?.Properties.Environment.Variables).toMatchObject({ SEEK_QUOTA_REQUESTS_PER_MINUTE: '800', SEEK_QUOTA_TOKENS_PER_MINUTE: '600000' });
  });

  it('is absent unless stated', () => {
    const template = Template.fromStack(buildStack(createSynthesisApp()));
    const variables = Object.values(template.findResources('AWS::Lambda::Function')).map((r) => JSON.stringify((r as { Properties: { Environment?: unknown } }).Properties.Environment ?? {}));

    expect(variables.filter((v) => v.includes('SEEK_QUOTA_'))).toEqual([]);
  });

  it('refuses a quota that is not a positive whole number per minute', () => {
    expect(() => buildStack(createSynthesisApp(), { seekQuota: { tokensPerMinute: 0 } })).toThrow(/quotaTokensPerMinute must be a positive integer \(per minute\), got 0/);
  });
});
