/**
 * The operations dashboard of the stack (CloudWatch): the workflow's own metrics (shared/telemetry.ts,
 * emitted by lambdas/adapters/telemetry.ts in the embedded metric format) — model calls and
 * input/output tokens per role, KAR steps, finished runs, refusals and failed chunks — beside the
 * workflow's executions (`AWS/States`) and the status of every alarm of the stack.
 * Source: https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Dashboards.html
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { METRIC, METRICS_NAMESPACE, ROLE_DIMENSION } from '../shared/telemetry';

/** Properties of {@link OperationsDashboard}. */
export interface OperationsDashboardProps {
  /** The question-answering state machine (its executions are graphed). */
  readonly stateMachine: sfn.IStateMachine;
  /** The alarms whose status the dashboard shows. */
  readonly alarms: readonly cloudwatch.IAlarm[];
  /** `service` dimension of the metrics (Powertools adds it: POWERTOOLS_SERVICE_NAME). */
  readonly serviceName: string;
}

/** The dashboard. */
export class OperationsDashboard extends Construct {
  public readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: OperationsDashboardProps) {
    super(scope, id);
    const period = Duration.minutes(5);
    const metric = (name: string, dimensions: Record<string, string> = {}, label?: string) =>
      new cloudwatch.Metric({
        namespace: METRICS_NAMESPACE,
        metricName: name,
        dimensionsMap: { service: props.serviceName, ...dimensions },
        statistic: 'Sum',
        period,
        ...(label && { label }),
      });
    const perRole = (name: string) => ['seeker', 'reasoner'].map((role) => metric(name, { [ROLE_DIMENSION]: role }, `${role} ${name}`));
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      defaultInterval: Duration.hours(6),
      widgets: [
        [
          new cloudwatch.GraphWidget({ title: 'Model calls per role', left: perRole(METRIC.modelCalls), width: 8 }),
          new cloudwatch.GraphWidget({ title: 'Input tokens per role', left: perRole(METRIC.inputTokens), width: 8 }),
          new cloudwatch.GraphWidget({ title: 'Output tokens per role', left: perRole(METRIC.outputTokens), width: 8 }),
        ],
        [
          new cloudwatch.GraphWidget({
            title: 'Runs: finished, refused (NO ANSWER), KAR steps',
            left: [metric(METRIC.runsFinished), metric(METRIC.refusals), metric(METRIC.karSteps)],
            width: 8,
          }),
          new cloudwatch.GraphWidget({ title: 'Failed chunks (seeking agents that failed permanently)', left: [metric(METRIC.failedChunks)], width: 8 }),
          new cloudwatch.GraphWidget({
            title: 'Workflow executions',
            left: [props.stateMachine.metricStarted({ period }), props.stateMachine.metricSucceeded({ period }), props.stateMachine.metricFailed({ period })],
            width: 8,
          }),
        ],
        [new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: [...props.alarms], width: 24 })],
      ],
    });
  }
}
