/**
 * The workflow side of the retry policy (infra/extagents-workflow.ts `MODEL_RETRY`), as rendered in
 * the synthesized state machine: which errors each model task retries, how often, and the bound it
 * gives together with the Bedrock client's own retry (models/bedrock/bedrock.ts; its side is
 * tested against a local HTTP/2 server in test/integration/bedrock-retry.test.ts).
 */
import { Template } from 'aws-cdk-lib/assertions';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { BEDROCK_SDK_MAX_ATTEMPTS, BEDROCK_SDK_RETRY_MAX_DELAY_MS } from '../../models/bedrock/bedrock';
import { buildStack, createSynthesisApp } from '../../infra/extagents-stack';
import { STATE_NAMES } from '../../infra/extagents-workflow';
import { allStates, resolveStateMachineDefinition, type AslState } from '../../local/engine/definition';
import { ContextOverflowError, ModelConfigurationError, ModelError, RETRYABLE_ERRORS } from '../../shared/errors';

interface Retrier {
  ErrorEquals: string[];
  IntervalSeconds: number;
  MaxAttempts: number;
  BackoffRate: number;
  MaxDelaySeconds?: number;
  JitterStrategy?: string;
}

/** The model tasks of the workflow, by state name, with their rendered Retry lists. */
function modelTasks(): Record<string, Retrier[]> {
  const stack = buildStack(createSynthesisApp(), { modelSpec: 'bedrock:us.meta.llama3-1-8b-instruct-v1:0' });
  const template = Template.fromStack(stack).toJSON();
  const { definition } = resolveStateMachineDefinition(template, stack.getLogicalId(stack.stateMachine.node.defaultChild as sfn.CfnStateMachine));
  const byName = new Map<string, AslState>(allStates(definition));
  const names = [STATE_NAMES.Seek, STATE_NAMES.Reason, STATE_NAMES.AnswerBestEffort];
  return Object.fromEntries(names.map((name) => [name, (byName.get(name)?.Retry ?? []) as unknown as Retrier[]]));
}

/** Longest total wait of a retrier: the sum of its capped delays (full jitter only shortens them). */
function longestWaitSeconds(r: Retrier): number {
  let total = 0;
  for (let i = 0; i < r.MaxAttempts; i++) total += Math.min(r.IntervalSeconds * r.BackoffRate ** i, r.MaxDelaySeconds ?? Infinity);
  return total;
}

describe('the retry policy of model calls', () => {
  const tasks = modelTasks();

  it.each(Object.keys(tasks))('retries the transient model errors of %s with one bounded, fully jittered backoff', (name) => {
    // Arrange
    const retriers = tasks[name].filter((r) => r.ErrorEquals.some((e) => (RETRYABLE_ERRORS as readonly string[]).includes(e)));

    // Assert: exactly one retrier covers all of them: at most 7 attempts, at most 122 s of waiting
    expect(retriers).toHaveLength(1);
    const [retrier] = retriers;
    expect([...retrier.ErrorEquals].sort()).toEqual([...RETRYABLE_ERRORS].sort());
    expect(retrier).toMatchObject({ IntervalSeconds: 2, BackoffRate: 2, MaxAttempts: 6, MaxDelaySeconds: 60, JitterStrategy: 'FULL' });
    expect(longestWaitSeconds(retrier)).toBe(2 + 4 + 8 + 16 + 32 + 60);
  });

  it.each(Object.keys(tasks))('never retries a context overflow, a permanent model error or States.ALL in %s', (name) => {
    const retried = tasks[name].flatMap((r) => r.ErrorEquals);

    expect(retried).not.toContain(ContextOverflowError.name);
    expect(retried).not.toContain(ModelError.name);
    expect(retried).not.toContain(ModelConfigurationError.name);
    expect(retried).not.toContain('States.ALL');
    expect(retried).not.toContain('States.TaskFailed');
  });

  it('sends one model call at most 7 times when throttled and 14 times for transient failures', () => {
    // The SDK never retries throttling and retries other transient failures once, briefly.
    const taskAttempts = 1 + tasks[STATE_NAMES.Seek].find((r) => r.ErrorEquals.includes('ModelThrottledError'))!.MaxAttempts;

    expect(BEDROCK_SDK_MAX_ATTEMPTS).toBe(2);
    expect(BEDROCK_SDK_RETRY_MAX_DELAY_MS).toBeLessThanOrEqual(1000);
    expect(taskAttempts).toBe(7);
    expect(BEDROCK_SDK_MAX_ATTEMPTS * taskAttempts).toBe(14);
  });
});
