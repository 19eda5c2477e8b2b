/**
 * RunLauncher and ExecutionLookup (shared/executions.ts) over AWS Step Functions: StartExecution with
 * the run id as the execution name, DescribeExecution by the execution ARN derived from the state
 * machine ARN. The one Step Functions adapter: the API starts and describes runs with it, the jobs
 * and bulk survey functions describe their executions with it.
 *
 * - StartExecution is idempotent by name for Standard workflows: the same name and input while the
 *   execution runs succeeds again; a finished execution, or another input, answers
 *   `ExecutionAlreadyExists`, which this adapter reports as "already there" (`started: false`).
 *   The API's idempotency record (shared/api/idempotency.ts) has already ruled out another input.
 *   Source: https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html
 * - ListExecutions answers a state machine's executions newest first (by start date), at most
 *   `maxResults` (1-1,000) a page, with a `nextToken` for the next page (valid for 24 hours; an
 *   invalid one is `InvalidToken`, reported as InvalidInputError).
 *   Source: https://docs.aws.amazon.com/step-functions/latest/apireference/API_ListExecutions.html
 * - StopExecution stops a RUNNING execution: it ends ABORTED with the given `error` and `cause`.
 *   With a customer managed key on the state machine, Step Functions encrypts `error` and `cause`
 *   with it, and the caller would need KMS permissions; the workflow uses the AWS owned key.
 *   Source: https://docs.aws.amazon.com/step-functions/latest/apireference/API_StopExecution.html
 * - Execution ARN: `arn:<partition>:states:<region>:<account>:execution:<stateMachineName>:<name>`.
 *   Source: https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html
 */
import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  InvalidToken,
  ListExecutionsCommand,
  SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { ConfigurationError, InvalidInputError } from '../../shared/errors';
import {
  EXECUTION_STATUSES,
  causeMessage,
  type ExecutionControl,
  type ExecutionDescription,
  type ExecutionPage,
  type ExecutionStatus,
  type RunLauncher,
  type StopReason,
} from '../../shared/executions';
import { StateMachineArnSchema } from './lambda-env';
import type { PrepareEvent } from '../../shared/pipeline/state';

/** The RunLauncher (and ExecutionLookup) of the deployed stack. */
export class SfnRunLauncher implements RunLauncher, ExecutionControl {
  /**
   * @param client a Step Functions client created once per container.
   * @param stateMachineArn the workflow's state machine.
   * @throws ConfigurationError for a malformed state machine ARN.
   */
  constructor(
    private readonly client: SFNClient,
    private readonly stateMachineArn: string,
  ) {
    if (!StateMachineArnSchema.safeParse(stateMachineArn).success) throw new ConfigurationError(`Not a state machine ARN: ${JSON.stringify(stateMachineArn)}`);
  }

  /** The ARN of the execution `name` of this state machine. */
  executionArn(name: string): string {
    return `${this.stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
  }

  async start(name: string, input: PrepareEvent): Promise<{ started: boolean }> {
    try {
      await this.client.send(new StartExecutionCommand({ stateMachineArn: this.stateMachineArn, name, input: JSON.stringify(input) }));
      return { started: true };
    } catch (error) {
      if (error instanceof ExecutionAlreadyExists || (error as Error).name === 'ExecutionAlreadyExists') return { started: false };
      throw error;
    }
  }

  async describe(name: string): Promise<ExecutionDescription | undefined> {
    let out;
    try {
      out = await this.client.send(new DescribeExecutionCommand({ executionArn: this.executionArn(name) }));
    } catch (error) {
      if (error instanceof ExecutionDoesNotExist || (error as Error).name === 'ExecutionDoesNotExist') return undefined;
      throw error;
    }
    const status = statusOf(out.status);
    return {
      name,
      status,
      startedAt: (out.startDate ?? new Date(0)).toISOString(),
      ...(out.stopDate && { stoppedAt: out.stopDate.toISOString() }),
      ...(out.error !== undefined && { error: out.error }),
      ...(out.cause !== undefined && { cause: causeMessage(out.cause) }),
    };
  }

  async list(options: { limit: number; after?: string }): Promise<ExecutionPage> {
    let out;
    try {
      out = await this.client.send(
        new ListExecutionsCommand({
          stateMachineArn: this.stateMachineArn,
          maxResults: options.limit,
          ...(options.after !== undefined && { nextToken: options.after }),
        }),
      );
    } catch (error) {
      if (error instanceof InvalidToken || (error as Error).name === 'InvalidToken')
        throw new InvalidInputError('Not a position of the execution list (expired or altered)', { cause: error });
      throw error;
    }
    const executions = (out.executions ?? []).map(
      (e): ExecutionDescription => ({
        name: e.name ?? '',
        status: statusOf(e.status),
        startedAt: (e.startDate ?? new Date(0)).toISOString(),
        ...(e.stopDate && { stoppedAt: e.stopDate.toISOString() }),
      }),
    );
    return { executions, ...(out.nextToken !== undefined && { next: out.nextToken }) };
  }

  async abort(name: string, reason: StopReason): Promise<ExecutionDescription | undefined> {
    try {
      await this.client.send(new StopExecutionCommand({ executionArn: this.executionArn(name), error: reason.error, cause: reason.cause }));
    } catch (error) {
      if (error instanceof ExecutionDoesNotExist || (error as Error).name === 'ExecutionDoesNotExist') return undefined;
      throw error;
    }
    return this.describe(name);
  }
}

/** An execution status of the API's vocabulary (an unknown one, from a newer API, counts as RUNNING). */
function statusOf(status: string | undefined): ExecutionStatus {
  return (EXECUTION_STATUSES as readonly string[]).includes(status ?? '') ? (status as ExecutionStatus) : 'RUNNING';
}
