/**
 * ExecutionLookup (shared/pipeline/jobs.ts) over Step Functions DescribeExecution: how a job
 * question's execution ended, by name. The execution ARN of a Standard state machine's execution is
 * the state machine ARN with `stateMachine` replaced by `execution`, then `:<name>`.
 * Source: https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html
 */
import { DescribeExecutionCommand, ExecutionDoesNotExist, type SFNClient } from '@aws-sdk/client-sfn';
import type { ExecutionLookup, QuestionExecution } from '../../shared/pipeline/jobs';

export class SfnExecutionLookup implements ExecutionLookup {
  constructor(
    private readonly client: SFNClient,
    private readonly stateMachineArn: string,
  ) {}

  /** The execution ARN of an execution name of this state machine. */
  executionArn(executionName: string): string {
    return `${this.stateMachineArn.replace(':stateMachine:', ':execution:')}:${executionName}`;
  }

  async describe(executionName: string): Promise<QuestionExecution> {
    try {
      const out = await this.client.send(new DescribeExecutionCommand({ executionArn: this.executionArn(executionName) }));
      return {
        status: out.status ?? 'UNKNOWN',
        ...(out.error !== undefined && { error: out.error }),
        ...(out.cause !== undefined && { cause: out.cause }),
      };
    } catch (error) {
      if (error instanceof ExecutionDoesNotExist || (error as Error).name === 'ExecutionDoesNotExist') return { status: 'NOT_FOUND' };
      throw error;
    }
  }
}
