/**
 * Local emulation of a Parallel state (local/engine/definition.ts replaces each Parallel state by a
 * Task of the same name; local/engine/engine.ts routes it here), for the one behaviour of the
 * service that aws-local-stepfunctions 3.0.0's own Parallel lacks: when a branch fails, the service
 * stops every other branch, and a Distributed Map Run in flight in one is stopped with it (no further
 * item starts). The library aborts the other branches' executions, but a Task already running in
 * one (the local Distributed Map) is not told and would go on starting items.
 *
 * As the service: every branch gets the state's effective input; the result is the array of the
 * branches' outputs, in branch order; the first branch to fail fails the state with that branch's
 * error (name and cause), which `Retry` and `Catch` of the state then match. The caller's run options
 * (task overrides) are made per Parallel run by `runOptionsFor`, given a signal aborted once a branch
 * has failed (or the parent execution stops), so the Distributed Maps of the branches stop too.
 *
 * Source: "Parallel workflow state", Step Functions Developer Guide
 * (https://docs.aws.amazon.com/step-functions/latest/dg/state-parallel.html: "If any branch fails …
 * the entire Parallel state fails, and all its branches are stopped").
 */
import './polyfills';
import { ExecutionError, StateMachine, type RunOptions, type StateMachineDefinition } from 'aws-local-stepfunctions';
import type { AslDefinition, JsonValue } from './definition';

/** The library's JSON value type. */
type LibraryJson = Parameters<StateMachine['run']>[0];

/**
 * Run the branches of one Parallel state.
 * @param input the state's effective input (after InputPath and Parameters).
 * @param branches the state's branches, localized.
 * @param runOptionsFor run options of the branch executions, given the signal that stops them: their
 *   Distributed Maps start no further item once it is aborted.
 * @param parentSignal aborted when the execution running this state stops (it failed, ended or was
 *   aborted): the branches are aborted too.
 * @returns the branches' outputs in branch order.
 * @throws the error of the first branch that failed (a Fail state's error, a Task's error).
 */
export async function runParallel(
  input: unknown,
  branches: readonly AslDefinition[],
  runOptionsFor: (signal: AbortSignal) => RunOptions,
  parentSignal: AbortSignal,
): Promise<JsonValue[]> {
  const stop = new AbortController();
  const options = runOptionsFor(stop.signal);
  const executions = branches.map((branch) =>
    new StateMachine(branch as unknown as StateMachineDefinition, { validationOptions: { noValidate: true } }).run(
      JSON.parse(JSON.stringify(input ?? null)) as LibraryJson,
      options,
    ),
  );
  const onParentStop = (): void => stop.abort();
  stop.signal.addEventListener('abort', () => executions.forEach((execution) => execution.abort()), { once: true });
  if (parentSignal.aborted) stop.abort();
  parentSignal.addEventListener('abort', onParentStop, { once: true });
  try {
    return (await Promise.all(executions.map((execution) => execution.result))) as JsonValue[];
  } catch (error) {
    stop.abort();
    throw error instanceof ExecutionError ? error.cause : error;
  } finally {
    parentSignal.removeEventListener('abort', onParentStop);
  }
}
