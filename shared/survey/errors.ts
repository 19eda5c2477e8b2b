/** Typed errors of the survey task (names are part of the workflow contract, as in shared/errors.ts). */
import { ExtAgentsError } from '../errors';

/** No seeking agent found anything relevant to the topic: there is nothing to write a survey from. */
export class NoEvidenceError extends ExtAgentsError {}
