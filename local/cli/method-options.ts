/**
 * The flags of the method's run options that `ask` and `eval` share (one definition: the same
 * choices, default and help in both commands' --help).
 */
import { Option } from 'commander';
import { RunOptionsSchema } from '../../shared/config';
import { KAR_ROUNDS, KAR_STOP_RULES, SYNCHRONIZATION_MODES } from '../../shared/kar';

/** A flag of one enum run option: its choices, and the run option's default (one default: the schema's). */
function choiceOption(flags: string, help: string, choices: readonly string[], field: 'karStop' | 'karRounds' | 'synchronization'): Option {
  return new Option(flags, help).choices([...choices]).default(RunOptionsSchema.shape[field].parse(undefined));
}

/** `--kar-stop <rule>`: the run option `karStop` (shared/support.ts). */
export function karStopOption(): Option {
  return choiceOption(
    '--kar-stop <rule>',
    'when a KAR step\'s answer stands (run option karStop; docs/CONCEPTS.md, "When an answer stands"); always only when the quotes it cites hold it: first = the first such answer (the paper); confirmed = the next step, reading twice the messages, must give it again (unless the step read the whole pool); checked = one short call of the reasoning agent must say its cited passages state it',
    KAR_STOP_RULES,
    'karStop',
  );
}

/** `--kar-rounds <when>`: the run option `karRounds` (shared/pipeline/reason.ts). */
export function karRoundsOption(): Option {
  return choiceOption(
    '--kar-rounds <when>',
    'after which seeking rounds the reasoning agent reads (run option karRounds; docs/CONCEPTS.md, "When an answer stands"): each = after every round, a round that answers ending the run (a next round only after a refusal); last = every round is sought first, each after global knowledge synchronization, and KAR runs once over the pool of all rounds (every question pays for all --rounds of seeking)',
    KAR_ROUNDS,
    'karRounds',
  );
}

/** `--synchronization <mode>`: the run option `synchronization` (shared/pipeline/reason.ts, synchronize.ts). */
export function synchronizationOption(): Option {
  return choiceOption(
    '--synchronization <mode>',
    'what global knowledge synchronization gives round 2\'s seeking agents (run option synchronization; docs/CONCEPTS.md, "Synchronization that asks for what is missing"): plain = the best messages (the paper); follow-up = those and the question the reasoning agent says is still open (one short reasoning call per round that ends without an answer)',
    SYNCHRONIZATION_MODES,
    'synchronization',
  );
}
