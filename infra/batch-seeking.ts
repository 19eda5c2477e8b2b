/**
 * The states of a batch-seeking round (run option `seekMode: 'batch'`; shared/pipeline/seek-batch.ts;
 * docs/ARCHITECTURE.md, "Batch seeking"), shared by the QA workflow and the survey's first seeking round:
 *
 *   SubmitSeekBatch (the Seek function, `{seekBatch: 'submit', …}`) -> SeekBatchStatus?
 *   SeekBatchStatus?: waiting -> WaitForSeekBatch (the service's poll period, SecondsPath) -> CheckSeekBatch -> SeekBatchStatus?
 *                   | collecting -> CheckSeekBatch (the next page of records, at once)
 *                   | done, chunks remaining -> SeekBatchRemainder -> the seeking Map (on demand; it skips every chunk sought)
 *                   | done, none remaining -> SeekBatchComplete -> what follows the seeking Map
 *
 * No Lambda polls in a loop: the Wait state waits between two status reads (AWS's pattern for a
 * long job without a callback), one short invocation per read. The tasks' result is kept at
 * `$.seekBatch` and removed by the two exit Pass states (the next tasks validate the state strictly).
 * Source: https://docs.aws.amazon.com/step-functions/latest/dg/state-wait.html
 */
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import type { Construct } from 'constructs';
import { batchSeekingStateNames } from '../shared/pipeline/state-names';

/** Properties of {@link batchSeekingRound}. */
export interface BatchSeekingProps {
  /** State name prefix (unique names per state machine). */
  prefix: string;
  /** The Seek function (it serves the `{seekBatch}` events). */
  seekFunction: lambda.IFunction;
  /** The event's fields besides `seekBatch`: `runId`, `round`, `manifestKey` (JSONPath), `task`, `covered`. */
  eventFields: Record<string, unknown>;
  /** Every field of the state machine's state (its schema's keys): what the exit Pass states keep. */
  stateFields: readonly string[];
  /** The seeking Map of the round (on demand: the chunks the jobs did not answer). */
  seekingMap: sfn.IChainable;
  /** What follows the seeking Map (when no chunk remains). */
  afterSeeking: sfn.IChainable;
  /** The Lambda service retry every task of the state machine carries. */
  lambdaServiceRetry: sfn.RetryProps;
  /** The transient model error retry (a throttled batch control-plane call, e.g. a quota of jobs in flight). */
  modelRetry: sfn.RetryProps;
}

/**
 * Build the batch-seeking states of one round.
 * @returns the first state (SubmitSeekBatch), to be chosen when the state's `config.seekMode` is `batch`.
 */
export function batchSeekingRound(scope: Construct, props: BatchSeekingProps): sfn.IChainable {
  const names = batchSeekingStateNames(props.prefix);
  const task = (name: string, step: 'submit' | 'check'): tasks.LambdaInvoke => {
    const t = new tasks.LambdaInvoke(scope, name, {
      lambdaFunction: props.seekFunction,
      payloadResponseOnly: true,
      retryOnServiceExceptions: false,
      payload: sfn.TaskInput.fromObject({ seekBatch: step, ...props.eventFields }),
      resultPath: '$.seekBatch',
    });
    t.addRetry(props.lambdaServiceRetry);
    t.addRetry(props.modelRetry);
    return t;
  };
  const submit = task(names.SubmitSeekBatch, 'submit');
  const check = task(names.CheckSeekBatch, 'check');
  const wait = new sfn.Wait(scope, names.WaitForSeekBatch, {
    comment: 'A batch job still runs: wait the service poll period, then read its status once.',
    time: sfn.WaitTime.secondsPath('$.seekBatch.waitSeconds'),
  });
  const keepState = Object.fromEntries(props.stateFields.map((field) => [field, sfn.JsonPath.objectAt(`$.${field}`)]));
  const remainder = new sfn.Pass(scope, names.SeekBatchRemainder, {
    comment: 'The chunks the batch jobs did not answer (none batched, failed records, a failed job): sought on demand by the Map.',
    parameters: keepState,
  });
  const complete = new sfn.Pass(scope, names.SeekBatchComplete, {
    comment: 'Every chunk of the round was sought from the batch records.',
    parameters: keepState,
  });
  const status = new sfn.Choice(scope, names.SeekBatchStatus, { comment: 'Batch seeking: wait, read the next page of records, or leave.' })
    .when(sfn.Condition.stringEquals('$.seekBatch.status', 'waiting'), wait)
    .when(sfn.Condition.stringEquals('$.seekBatch.status', 'collecting'), check)
    .when(sfn.Condition.numberGreaterThan('$.seekBatch.remaining', 0), remainder)
    .otherwise(complete);
  submit.next(status);
  wait.next(check);
  check.next(status);
  remainder.next(props.seekingMap);
  complete.next(props.afterSeeking);
  return submit;
}
