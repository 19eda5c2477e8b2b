/**
 * The deployment's default quota of the seeking model (CDK context `quotaRequestsPerMinute`,
 * `quotaTokensPerMinute`, infra/app.ts -> `seekQuota`): set on the workflow's functions, which Prepare
 * reads (lambdas/adapters/env.ts) to derive each run's seeking MaxConcurrency (shared/quota.ts), and
 * on the API function, which refuses up front a run the quota cannot carry (shared/api/core.ts).
 */
import { Template } from 'aws-cdk-lib/assertions';
import { buildStack, createSynthesisApp } from '../../infra/extagents-stack';

jest.setTimeout(60_000);

describe("the seeking model's quota as a deployment setting", () => {
  it("goes to the Prepare function's environment and the API function's (which refuses with 422 a run the quota cannot carry)", () => {
    const template = Template.fromStack(buildStack(createSynthesisApp(), { seekQuota: { requestsPerMinute: 800, tokensPerMinute: 600_000 } }));

    type Fn = { Properties: { Environment: { Variables: Record<string, unknown> } } };
    const functions = Object.entries(template.findResources('AWS::Lambda::Function'));
    const prepare = functions.find(([id]) => id.startsWith('PrepareFunction'))?.[1] as Fn | undefined;
    const api = functions.find(([id]) => id.startsWith('ApiHandler'))?.[1] as Fn | undefined;

    expect(prepare?.Properties.Environment.Variables).toMatchObject({ SEEK_QUOTA_REQUESTS_PER_MINUTE: '800', SEEK_QUOTA_TOKENS_PER_MINUTE: '600000' });
    expect(api?.Properties.Environment.Variables).toMatchObject({ SEEK_QUOTA_REQUESTS_PER_MINUTE: '800', SEEK_QUOTA_TOKENS_PER_MINUTE: '600000' });
  });

  it('is absent unless stated', () => {
    const template = Template.fromStack(buildStack(createSynthesisApp()));
    const variables = Object.values(template.findResources('AWS::Lambda::Function')).map((r) =>
      JSON.stringify((r as { Properties: { Environment?: unknown } }).Properties.Environment ?? {}),
    );

    expect(variables.filter((v) => v.includes('SEEK_QUOTA_'))).toEqual([]);
  });

  it('refuses a quota that is not a positive whole number per minute', () => {
    expect(() => buildStack(createSynthesisApp(), { seekQuota: { tokensPerMinute: 0 } })).toThrow(
      /quotaTokensPerMinute must be a positive integer \(per minute\), got 0/,
    );
  });
});
