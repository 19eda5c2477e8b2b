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
 * - Execution ARN: `arn:<partition>:states:<region>:<account>:execution:<stateMachineName>:<name>`.
 *   Source: https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html
 */
import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  SFNClient,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import { ConfigurationError } from '../../shared/errors';
import { EXECUTION_STATUSES, causeMessage, type ExecutionDescription, type ExecutionStatus, type RunLauncher } from '../../shared/executions';
import { StateMachineArnSchema } from './lambda-env';
import type { PrepareEvent } from '../../shared/pipeline/state';

/** The RunLauncher (and ExecutionLookup) of the deployed stack. */
export class SfnRunLauncher implements RunLauncher {
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
    const status = (EXECUTION_STATUSES as readonly string[]).includes(out.status ?? '') ? (out.status as ExecutionStatus) : 'RUNNING';
    return {
      name,
      status,
      startedAt: (out.startDate ?? new Date(0)).toISOString(),
      ...(out.stopDate && { stoppedAt: out.stopDate.toISOString() }),
      ...(out.error !== undefined && { error: out.error }),
      ...(out.cause !== undefined && { cause: causeMessage(out.cause) }),
    };
  }
}
