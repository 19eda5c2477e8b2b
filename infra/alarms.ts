/**
 * CloudWatch alarms of the stack: failed and throttled executions of every state machine
 * (`AWS/States` ExecutionsFailed, ExecutionThrottled) and throttled invocations of every Lambda
 * function (`AWS/Lambda` Throttles), and messages waiting in a dead-letter queue (`AWS/SQS`
 * ApproximateNumberOfMessagesVisible), and events waiting in a queue an operator reads (the failed
 * Bedrock batch jobs of infra/batch-inference.ts, same metric), each alarming on one occurrence in 5
 * minutes; missing data (no executions) is not breaching. Optionally notifies an SNS topic (with an
 * e-mail subscription).
 *
 * Sources: "Monitoring Step Functions metrics using Amazon CloudWatch"
 * (https://docs.aws.amazon.com/step-functions/latest/dg/procedure-cw-metrics.html), "Using CloudWatch
 * metrics with Lambda" (https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics-types.html).
 */
import { CfnOutput, Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { acknowledge } from './nag';

/** Properties of {@link OperationsAlarms}. */
export interface OperationsAlarmsProps {
  /** State machines by a short name (used in alarm ids and descriptions). */
  readonly stateMachines: Readonly<Record<string, sfn.IStateMachine>>;
  /** Lambda functions by a short name. */
  readonly functions: Readonly<Record<string, lambda.IFunction>>;
  /** Dead-letter queues by a short name: alarm when one holds a message. @default none */
  readonly deadLetterQueues?: Readonly<Record<string, sqs.IQueue>>;
  /**
   * Queues that keep events for the operator (nothing consumes them), by a short name, each with what
   * a message there means: alarm while one holds a message. @default none
   */
  readonly eventQueues?: Readonly<Record<string, { readonly queue: sqs.IQueue; readonly description: string }>>;
  /** Create an SNS topic the alarms notify. @default false (true when `alarmEmail` is set) */
  readonly topic?: boolean;
  /** E-mail address subscribed to the topic (implies `topic`). */
  readonly alarmEmail?: string;
}

/** The alarms (and the optional topic). */
export class OperationsAlarms extends Construct {
  /** Every alarm, by id. */
  public readonly alarms: Readonly<Record<string, cloudwatch.Alarm>>;
  /** The topic the alarms notify, when requested. */
  public readonly topic?: sns.Topic;

  constructor(scope: Construct, id: string, props: OperationsAlarmsProps) {
    super(scope, id);
    if (props.topic || props.alarmEmail) {
      this.topic = new sns.Topic(this, 'Topic', { displayName: 'ExtAgents alarms', enforceSSL: true });
      // AwsSolutions-SNS2 wants server-side encryption; CloudWatch alarms cannot publish to a topic
      // encrypted with the AWS managed key (alias/aws/sns) and a customer managed key costs a key per
      // stack for messages that only name an alarm and a metric.
      acknowledge(this.topic, {
        nag: ['AwsSolutions-SNS2'],
        checkov: ['CKV_AWS_26'],
        reason: 'Alarm notifications carry no data beyond alarm and metric names; CloudWatch cannot publish to a topic under the AWS managed SNS key.',
      });
      if (props.alarmEmail) this.topic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));
      new CfnOutput(Stack.of(this), 'AlarmTopicArn', { value: this.topic.topicArn, description: 'SNS topic of the stack alarms' });
    }

    const alarms: Record<string, cloudwatch.Alarm> = {};
    const add = (alarmId: string, metric: cloudwatch.IMetric, description: string): void => {
      const alarm = new cloudwatch.Alarm(this, alarmId, {
        metric,
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: description,
      });
      if (this.topic) alarm.addAlarmAction(new actions.SnsAction(this.topic));
      alarms[alarmId] = alarm;
    };
    const period = Duration.minutes(5);
    for (const [name, machine] of Object.entries(props.stateMachines)) {
      add(`${name}ExecutionsFailed`, machine.metricFailed({ period, statistic: 'Sum' }), `${name}: an execution failed (ExecutionsFailed >= 1 in 5 minutes).`);
      add(
        `${name}ExecutionsThrottled`,
        machine.metricThrottled({ period, statistic: 'Sum' }),
        `${name}: an execution was throttled (ExecutionThrottled >= 1 in 5 minutes).`,
      );
    }
    for (const [name, fn] of Object.entries(props.functions)) {
      add(`${name}Throttles`, fn.metricThrottles({ period, statistic: 'Sum' }), `${name}: invocations were throttled (Throttles >= 1 in 5 minutes).`);
    }
    for (const [name, queue] of Object.entries(props.deadLetterQueues ?? {})) {
      add(
        `${name}Messages`,
        queue.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }),
        `${name}: an event could not be processed and waits in the dead-letter queue (ApproximateNumberOfMessagesVisible >= 1).`,
      );
    }
    for (const [name, { queue, description }] of Object.entries(props.eventQueues ?? {})) {
      add(`${name}Messages`, queue.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }), description);
    }
    this.alarms = alarms;
  }
}
