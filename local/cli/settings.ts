/**
 * Option defaults from the environment and a project file, so a setting need not be passed on every
 * command. Precedence, highest first: the flag, then `EXTAGENTS_<OPTION>` (the option's long name in
 * capitals, `-` as `_`: EXTAGENTS_MODEL, EXTAGENTS_CHUNK_TOKENS), then the defaults file (JSON, the
 * flags' long names as keys: `{"model": "llama:m.gguf", "chunk-tokens": "4k"}`; the file
 * EXTAGENTS_CONFIG names, else `extagents.config.json` in the current directory when there is one),
 * then the built-in default (the schema's).
 *
 * Validated once, at load, every value of both sources, with the parser of the flag; a bad value is
 * a usage error naming its source (`EXTAGENTS_CHUNK_TOKENS: --chunk-tokens must be …`,
 * `/p/extagents.config.json: "rounds": …`) for the commands that take that option and are not given
 * the flag, and nothing to the others (a bad EXTAGENTS_CHUNK_TOKENS does not stop `runs ls`). A file
 * that cannot be read as a whole (missing, not JSON, an unknown key) stops every command that takes
 * settings.
 *
 * Only the options below, in the commands where they mean the same thing: `--concurrency` is
 * seeking agents at once in `ask` and `survey` only (`job` and `eval` count runs), `--rounds` is
 * `ask`'s (a survey's rounds are 1-2 and mean something else), `--token` keeps serve's own
 * EXTAGENTS_TOKEN and `--structured` its OPENAI_STRUCTURED.
 *
 * Hand-written rather than a library: commander (the CLI's parser) has environment variables
 * (`Option.env`) but reads a boolean variable as true whatever its value (EXTAGENTS_BEST_EFFORT=false
 * would turn it on) and has no file; `rc`, the one configuration loader in node_modules (a transitive
 * dependency), reads files from many places (`~/.extagentsrc`, `/etc`) with a lower-case prefix and
 * nested keys. This uses commander's own value sources ('env', 'config'), so `getOptionValueSource`
 * tells a given value from a default everywhere, as before.
 */
import type { Command } from 'commander';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { UsageError } from './common';

/** The defaults file looked for in the current directory. */
export const DEFAULTS_FILE = 'extagents.config.json';

/** The variable that names another defaults file. */
export const DEFAULTS_FILE_VARIABLE = 'EXTAGENTS_CONFIG';

/** Each option that takes a default from the environment and the file, and the commands where it does. */
export const SETTINGS = {
  model: ['ask', 'serve', 'job', 'survey', 'eval'],
  'state-dir': ['ask', 'serve', 'ingest', 'job', 'survey', 'runs'],
  'chunk-tokens': ['ask', 'ingest', 'survey', 'eval'],
  rounds: ['ask'],
  'kar-first-k': ['ask'],
  'kar-stop': ['ask', 'eval'],
  'kar-rounds': ['ask', 'eval'],
  synchronization: ['ask', 'eval'],
  concurrency: ['ask', 'survey'],
  'reasoner-budget': ['ask'],
  'sync-budget': ['ask'],
  'tolerated-failure': ['ask'],
  'best-effort': ['ask', 'eval'],
  pipeline: ['ask'],
  ranking: ['ask'],
  reseek: ['ask'],
  'max-cost': ['ask'],
  'target-words': ['survey'],
  'max-sections': ['survey'],
} as const satisfies Record<string, readonly string[]>;

export type SettingName = keyof typeof SETTINGS;

/** The run option (shared/config.ts RunOptionsSchema) of each setting that is one, parsed by its flag's rule. */
const RUN_OPTION_FIELDS = {
  'chunk-tokens': 'chunkTokens',
  rounds: 'rounds',
  'kar-first-k': 'karFirstK',
  concurrency: 'concurrency',
  'reasoner-budget': 'reasonerBudgetTokens',
  'sync-budget': 'syncBudgetTokens',
  'tolerated-failure': 'toleratedFailurePercentage',
  'max-cost': 'maxCostUsd',
} as const satisfies Partial<Record<SettingName, string>>;

/** The environment variable of an option: `EXTAGENTS_CHUNK_TOKENS`. */
export const settingVariable = (name: string): string => `EXTAGENTS_${name.toUpperCase().replace(/-/g, '_')}`;

/** A value as a source holds it: text (a variable, or a file's string), or a file's number or boolean. */
type RawValue = string | number | boolean;

/**
 * Parse one setting with the flag's own rule (the same functions the commands give commander).
 * Loaded when a command runs, not for `--help` (zod and the schemas).
 * @throws an Error whose message says what is wrong.
 */
function parseSetting(name: SettingName, raw: RawValue): string | number | boolean {
  const { schemaFlag } = require('./cli-numbers') as typeof import('./cli-numbers');
  const { RunOptionsSchema } = require('../../shared/config') as typeof import('../../shared/config');
  const { SurveyOptionsSchema } = require('../../shared/survey/options') as typeof import('../../shared/survey/options');
  const text = (): string => {
    if (typeof raw === 'boolean') throw new Error(`--${name} takes a value, not ${raw}`);
    return String(raw);
  };
  const run = (field: keyof typeof RunOptionsSchema.shape) => schemaFlag(`--${name}`, RunOptionsSchema, field)(text());
  switch (name) {
    case 'model': {
      const { toModelSpec } = require('../../models/spec') as typeof import('../../models/spec');
      toModelSpec(text());
      return text();
    }
    case 'state-dir':
      if (text().trim() === '') throw new Error('--state-dir must not be empty');
      return text();
    case 'chunk-tokens':
    case 'rounds':
    case 'kar-first-k':
    case 'concurrency':
    case 'reasoner-budget':
    case 'sync-budget':
    case 'tolerated-failure':
    case 'max-cost':
      return run(RUN_OPTION_FIELDS[name]);
    case 'target-words':
      return schemaFlag('--target-words', SurveyOptionsSchema, 'targetWords')(text());
    case 'max-sections':
      return schemaFlag('--max-sections', SurveyOptionsSchema, 'maxSections')(text());
    case 'ranking': {
      const { RANKING_MODES } = require('../../shared/ranking') as typeof import('../../shared/ranking');
      if (!(RANKING_MODES as readonly string[]).includes(text())) throw new Error(`--ranking must be one of ${RANKING_MODES.join(', ')} (got "${text()}")`);
      return text();
    }
    case 'kar-stop': {
      const { KAR_STOP_RULES } = require('../../shared/kar') as typeof import('../../shared/kar');
      if (!(KAR_STOP_RULES as readonly string[]).includes(text())) throw new Error(`--kar-stop must be one of ${KAR_STOP_RULES.join(', ')} (got "${text()}")`);
      return text();
    }
    case 'kar-rounds': {
      const { KAR_ROUNDS } = require('../../shared/kar') as typeof import('../../shared/kar');
      if (!(KAR_ROUNDS as readonly string[]).includes(text())) throw new Error(`--kar-rounds must be one of ${KAR_ROUNDS.join(', ')} (got "${text()}")`);
      return text();
    }
    case 'synchronization': {
      const { SYNCHRONIZATION_MODES } = require('../../shared/kar') as typeof import('../../shared/kar');
      if (!(SYNCHRONIZATION_MODES as readonly string[]).includes(text()))
        throw new Error(`--synchronization must be one of ${SYNCHRONIZATION_MODES.join(', ')} (got "${text()}")`);
      return text();
    }
    case 'reseek': {
      const { RESEEK_MODES } = require('../../shared/reseek') as typeof import('../../shared/reseek');
      if (!(RESEEK_MODES as readonly string[]).includes(text())) throw new Error(`--reseek must be one of ${RESEEK_MODES.join(', ')} (got "${text()}")`);
      return text();
    }
    case 'best-effort':
    case 'pipeline': {
      if (typeof raw === 'boolean') return raw;
      const value = String(raw).trim().toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(value)) return true;
      if (['false', '0', 'no', 'off'].includes(value)) return false;
      throw new Error(`--${name} must be true or false (also 1/0, yes/no, on/off; got "${String(raw)}")`);
    }
  }
}

/** One setting's value and where it came from. */
export interface SettingValue {
  value: string | number | boolean;
  /** `env` or `config` (commander's value sources). */
  source: 'env' | 'config';
  /** The variable or the file, for messages. */
  from: string;
}

/** A setting whose value its flag's parser refused: the usage error, raised only where the option is used. */
export interface BadSetting {
  /** The error naming the source and the rule, e.g. `EXTAGENTS_CHUNK_TOKENS: --chunk-tokens must be …`. */
  problem: UsageError;
  source: 'env' | 'config';
  from: string;
}

/** Every setting the environment and the defaults file give, validated; the environment wins. */
export type Settings = Partial<Record<SettingName, SettingValue | BadSetting>>;

const isSetting = (name: string): name is SettingName => Object.hasOwn(SETTINGS, name);

/**
 * Load and validate the defaults of both sources, once.
 * @param env the environment (EXTAGENTS_CONFIG, EXTAGENTS_<OPTION>).
 * @param cwd where `extagents.config.json` is looked for.
 * @returns each setting's value, or for a bad value the {@link BadSetting} that
 *   {@link applySettings} raises in the commands that use it.
 * @throws UsageError naming the file: a file EXTAGENTS_CONFIG names that is missing, a file that is
 *   not a JSON object, an unknown key, a value that is not a string, number or boolean.
 */
export function loadSettings(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): Settings {
  const settings: Settings = {};
  const named = env[DEFAULTS_FILE_VARIABLE]?.trim();
  const file = named ? path.resolve(cwd, named) : path.join(cwd, DEFAULTS_FILE);
  if (named && !existsSync(file)) throw new UsageError(`${DEFAULTS_FILE_VARIABLE}=${named}: no such file`);
  if (existsSync(file)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      throw new UsageError(`${file}: not JSON (${(error as Error).message})`, { cause: error });
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new UsageError(`${file}: must be a JSON object of option names and values`);
    for (const [key, raw] of Object.entries(parsed)) {
      if (!isSetting(key)) throw new UsageError(`${file}: unknown option "${key}" (options a file may set: ${Object.keys(SETTINGS).join(', ')})`);
      if (!['string', 'number', 'boolean'].includes(typeof raw)) throw new UsageError(`${file}: "${key}" must be a string, number or boolean`);
      settings[key] = checked(key, raw as RawValue, `${file}: "${key}"`, 'config', file);
    }
  }
  for (const key of Object.keys(SETTINGS) as SettingName[]) {
    const variable = settingVariable(key);
    const raw = env[variable];
    if (raw === undefined || raw === '') continue;
    settings[key] = checked(key, raw, variable, 'env', variable);
  }
  return settings;
}

function checked(name: SettingName, raw: RawValue, where: string, source: 'env' | 'config', from: string): SettingValue | BadSetting {
  try {
    return { value: parseSetting(name, raw), source, from };
  } catch (error) {
    return { problem: new UsageError(`${where}: ${(error as Error).message}`, { cause: error }), source, from };
  }
}

/**
 * Give a command, before it parses its arguments, the defaults of {@link loadSettings} for the
 * options it takes that mean that setting (a flag given then wins: commander's 'cli' source). A bad
 * value of such an option stops the command before its action, unless the flag is given.
 * @param top the top-level command's name (`runs` for `runs ls`).
 * @throws (from the command's preAction hook) the {@link BadSetting}'s UsageError.
 */
export function applySettings(command: Command, top: string, settings: Settings): void {
  for (const option of command.options) {
    const name = option.long?.replace(/^--(no-)?/, '');
    if (name === undefined || !isSetting(name)) continue;
    if (!(SETTINGS[name] as readonly string[]).includes(top)) continue;
    const setting = settings[name];
    if (setting === undefined) continue;
    if ('problem' in setting) {
      const attribute = option.attributeName();
      command.hook('preAction', () => {
        if (command.getOptionValueSource(attribute) !== 'cli') throw setting.problem;
      });
      continue;
    }
    command.setOptionValueWithSource(option.attributeName(), setting.value, setting.source);
  }
}

/** The `--help` lines of a command's settings (after its options). */
export function settingsHelp(top: string): string | undefined {
  const names = (Object.keys(SETTINGS) as SettingName[]).filter((name) => (SETTINGS[name] as readonly string[]).includes(top));
  if (names.length === 0) return undefined;
  return (
    `\nDefaults: ${names.map((n) => `--${n} (${settingVariable(n)})`).join(', ')} also come from the environment ` +
    `and from a JSON file (${DEFAULTS_FILE} in the current directory, or the file ${DEFAULTS_FILE_VARIABLE} names) keyed by the option names: ` +
    'a flag wins over the environment, the environment over the file, the file over the built-in default (docs/CLI.md, "Options, defaults and corpora").'
  );
}
