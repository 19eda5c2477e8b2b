/**
 * Metrics, traces and the operations dashboard (issue 13, item 5): the dashboard graphs the
 * workflow's metrics in their namespace (the names the Lambdas emit: shared/telemetry.ts) and shows
 * every alarm; the workflow's functions run with active tracing; and the metrics the handlers emit
 * are embedded-metric-format lines of that namespace carrying the run id.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { buildStack, createSynthesisApp } from '../../infra/extagents-stack';
import { METRIC, METRICS_NAMESPACE } from '../../shared/telemetry';

let template: Template;
beforeAll(() => {
  template = Template.fromStack(buildStack(createSynthesisApp(), { env: { account: '123456789012', region: 'us-east-1' } }));
});

/** The dashboard body as text (CloudFormation joins it from parts: the logical ids of the alarms and the state machine). */
function dashboardBody(): string {
  const dashboards = template.findResources('AWS::CloudWatch::Dashboard');
  expect(Object.keys(dashboards)).toHaveLength(1);
  return JSON.stringify(Object.values(dashboards)[0].Properties.DashboardBody);
}

describe('the operations dashboard', () => {
  it('graphs every workflow metric in the ExtAgents namespace, per role where it has one', () => {
    const body = dashboardBody();
    expect(body).toContain(`\\"${METRICS_NAMESPACE}\\"`);
    for (const name of Object.values(METRIC)) expect(body).toContain(`\\"${name}\\"`);
    expect(body).toContain('\\"role\\",\\"seeker\\"');
    expect(body).toContain('\\"role\\",\\"reasoner\\"');
    expect(body).toContain('\\"AWS/States\\"');
  });

  it('shows the status of every alarm of the stack', () => {
    const body = dashboardBody();
    const alarms = Object.keys(template.findResources('AWS::CloudWatch::Alarm'));
    expect(alarms.length).toBeGreaterThan(5);
    for (const id of alarms) expect(body).toContain(id);
  });

  it('runs the workflow functions with active X-Ray tracing (their Bedrock and DynamoDB calls are captured)', () => {
    const functions = template.findResources('AWS::Lambda::Function');
    const workflow = Object.entries(functions).filter(([id]) => /^(Prepare|Seek|Reason|Synchronize|Finalize)Function/.test(id));
    expect(workflow).toHaveLength(5);
    for (const [, fn] of workflow) expect(fn.Properties.TracingConfig).toEqual({ Mode: 'Active' });
  });
});

describe('the metrics the handlers emit', () => {
  it('are embedded-metric-format lines of the namespace, with the role dimension and the run id', async () => {
    const lines: string[] = [];
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (lines.push(String(chunk)), true));
    const saved = { ...process.env };
    process.env.POWERTOOLS_SERVICE_NAME = 'extagents';
    process.env.POWERTOOLS_DEV = 'false';
    try {
      const telemetry = await import('../../lambdas/adapters/telemetry');
      const handler = telemetry.withMetrics(async () => {
        telemetry.recordUsage('seeker', { calls: 2, inputTokens: 300, outputTokens: 40 });
        telemetry.runMetrics.runFinished({ answerable: false, chunkFailures: [{ chunk: 3 }, { chunk: 4 }] } as never);
        return 'done';
      });
      await handler({ runId: 'run-1' });
    } finally {
      spy.mockRestore();
      process.env = saved;
    }
    const emf = lines
      .flatMap((l) => l.split('\n'))
      .filter((l) => l.includes('"_aws"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const seeker = Object.assign({}, ...emf.filter((m) => m.role === 'seeker')) as Record<string, unknown>;
    expect(seeker).toMatchObject({ ModelCalls: 2, InputTokens: 300, OutputTokens: 40 });
    expect(JSON.stringify((seeker._aws as { CloudWatchMetrics: unknown[] }).CloudWatchMetrics)).toContain(METRICS_NAMESPACE);
    const run = emf.find((m) => m.RunsFinished !== undefined);
    expect(run).toMatchObject({ RunsFinished: 1, Refusals: 1, FailedChunks: 2, runId: 'run-1' });
  });
});
