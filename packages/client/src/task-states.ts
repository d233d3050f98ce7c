import type { AnyStatus, FailureState, SuccessState } from './types.ts';

/**
 * Which statuses end a task. Pipelines answer `SUCCESS` or `FAILURE`; a training answers
 * `completed` or `failed`; everything else (PENDING, queued, initialising, running, unknown) means
 * the task goes on. The test of the types checks that these lists cover every status the contract
 * has.
 */
export const SUCCESS_STATES = ['SUCCESS', 'completed'] as const satisfies readonly SuccessState[];
export const FAILURE_STATES = ['FAILURE', 'failed'] as const satisfies readonly FailureState[];

export function hasSucceeded<S extends AnyStatus>(status: S): status is Extract<S, { status: SuccessState }> {
  return (SUCCESS_STATES as readonly string[]).includes(status.status);
}

export function hasFailed<S extends AnyStatus>(status: S): status is Extract<S, { status: FailureState }> {
  return (FAILURE_STATES as readonly string[]).includes(status.status);
}

export function hasEnded(status: AnyStatus): boolean {
  return hasSucceeded(status) || hasFailed(status);
}
