/**
 * The port every model provider implements (one folder per provider under models/, one table of
 * them in models/index.ts keyed by the model kind). A provider turns a parsed model spec of its kind
 * (models/spec.ts) into the domain's model ports (`ChatModel`, `AgentModel`: shared/ports.ts;
 * `SurveyModel`: shared/survey/ports.ts), says what it needs before any work (settings, access,
 * loading), and what the cost estimate prices it as.
 *
 * Adding a provider: a folder `models/<kind>/` whose `index.ts` exports a `ModelProvider<'<kind>'>`
 * named `provider`, its kind in the spec grammar (models/spec.ts), and its line in the table
 * (models/index.ts): the compiler lists every place a kind is missing (docs/ARCHITECTURE.md, "Models").
 * A provider's own dependencies are declared in its folder (the `D` of `ModelProvider<K, D>`), so
 * the port never imports a provider's folder and knows no provider's options.
 */
import type { RunOptions } from '../shared/config';
import type { ModelPricing } from '../shared/cost';
import type { ModelSpec } from '../shared/model-spec';
import type { AgentModel, ChatModel } from '../shared/ports';
import type { AgentRole } from '../shared/types';
import type { SurveyModel } from '../shared/survey/ports';

/** The model kinds: the scheme of a model spec (`extractive`, `bedrock`, `openai`, `llama`). */
export type ModelKind = ModelSpec['kind'];

/** The parsed spec of one kind. */
export type SpecOf<K extends ModelKind> = Extract<ModelSpec, { kind: K }>;

/**
 * What every host may give every provider's builders, whatever its kind. A provider's own
 * dependencies (a Bedrock client factory, an OpenAI-compatible server's options) are declared in its
 * folder, as the `D` of its `ModelProvider<K, D>`, and a host passes them under the kind's key
 * (`ProviderDeps` in models/index.ts: `{ bedrock: { client }, openai: { options, apiKey }, … }`).
 */
export interface HostDeps {
  /**
   * Wraps the seeking agents' chat model (the batch path, shared/pipeline/seek-batch.ts: its first
   * call captured as a batch record, then answered from the job's output). A provider that makes no
   * chat call (the extractive reader) ignores it.
   */
  wrapSeeker?: (chat: ChatModel) => ChatModel;
}

/**
 * What a Lambda container lends a provider to build its own dependencies from the function's
 * environment (`ModelProvider.lambdaDeps`; lambdas/adapters/aws.ts).
 */
export interface LambdaHost {
  /** The same AWS SDK client, each of its calls a trace subsegment (Powertools Tracer `captureAWSv3Client`). */
  trace<T>(client: T): T;
  /** A warning in the function's structured log (Powertools Logger). */
  warn(message: string, detail: Record<string, unknown>): void;
}

/** The dependencies provider `K` reads: the host's, and its own (`D`) under its kind's key. */
export type DepsFor<K extends ModelKind, D> = HostDeps & { readonly [P in K]?: D };

/**
 * What hosts that do not load a provider need to know of a spec (models/traits.ts): the CDK app's
 * grants and settings, `doctor`'s checks, the page's model line. Declared per kind in
 * `models/<kind>/traits.ts`, which loads no SDK.
 */
export interface ModelTraits {
  /** A language model; false for the offline extractive reader (sentences chosen by word overlap), which the CLI and the page say. */
  languageModel: boolean;
  /** One line on what serves the spec, as `doctor` prints it when there is no AWS model to check. */
  service: string;
  /**
   * The model id each role invokes through Amazon Bedrock's runtime (the stack grants
   * `bedrock:InvokeModel` on them and may batch the seeking agents; `doctor` checks their access);
   * unset for a spec that calls no Bedrock model.
   */
  invokedModels?: { seeker: string; reasoner: string };
  /**
   * The spec calls a model server outside AWS: the stack needs its https base URL and grants its
   * key's secret, by the names given here (the `openai:` provider's: CDK context `openaiBaseUrl`,
   * OPENAI_BASE_URL; `openaiApiKeySecretName`, OPENAI_API_KEY_SECRET); unset otherwise.
   */
  externalServer?: ExternalServer;
  /** Why the AWS stack cannot deploy the spec (the synth's error); unset when it can. */
  cloudRefusal?: string;
}

/**
 * A model server outside AWS as the stack deploys it (infra/extagents-stack.ts): its https API root
 * and, optionally, a Secrets Manager secret with its key, each a CDK context key (also the stack
 * prop of that name) and the environment variable the functions read (the provider's
 * `lambdaDeps`).
 */
export interface ExternalServer {
  /** What it is, for messages, e.g. "the OpenAI-compatible server". */
  readonly what: string;
  /** Its API root: context key, environment variable, an example value (`https://<host>/v1`). */
  readonly baseUrl: { readonly context: string; readonly env: string; readonly example: string };
  /** The secret holding its key (by name, in the stack's account and region): context key, variable naming it on the model-calling functions. */
  readonly apiKeySecret: { readonly context: string; readonly env: string };
}

/**
 * How a kind is written in a model spec and what it is, declared in its provider's `traits.ts`: the
 * spec grammar of error messages (models/spec.ts) and every command's `--model` help are built from
 * these, so no list of kinds is written by hand outside models/.
 */
export interface SpecSyntax {
  /** The kind's form, e.g. `bedrock:<seekerModelId>[,<reasonerModelId>]`. */
  syntax: string;
  /** What it is and what it needs, one clause, e.g. "Amazon Bedrock Converse API; needs AWS credentials". */
  help: string;
  /**
   * Optional npm packages the kind needs, each a key of package.json's `peerDependencies` (the CLI
   * adds their install command: shared/optional-packages.ts). Plain names here, so the library's
   * declarations do not reach package.json.
   */
  optionalPackages?: readonly string[];
}

/** Options of {@link ModelProvider.load}. */
export interface LoadOptions {
  /** Parallel sequences of an in-process model's context (`llama:`); default 1. */
  sequences?: number;
}

/**
 * The models of one spec, as {@link ModelProvider.load} returns them: what the load learned (the
 * context size, measured run defaults) and the builders of the domain's model ports. The builders
 * exist only on a loaded set, so nothing can be built before its model is loaded; the state a
 * provider keeps (an in-process model, an OpenAI-compatible server's detected structured mode) is
 * this object's, shared by every model it builds, never the module's.
 */
export interface LoadedModels<Deps = HostDeps> {
  /** The model's context per sequence, tokens of its own tokenizer (the smaller of the two roles'); unset for a service with a large context. */
  contextTokens?: number;
  /**
   * Run option defaults measured for this model (a `llama:` model's profile, models/llama/profiles.ts:
   * e.g. the chunk size a small model reads reliably, KAR's first k), over the context-fitted ones
   * (models/context.ts `contextFittedRunOptionDefaults`); options a caller sets win over both.
   */
  runDefaults?: ModelRunDefaults;
  /**
   * The chat model of one role, or undefined for a provider that is not a language model (the extractive reader).
   * @throws ConfigurationError for a bad configuration (checked before any call).
   */
  chat(role: AgentRole, deps?: Deps): ChatModel | undefined;
  /** The seeking and reasoning agents. @throws as `chat`. */
  agents(deps?: Deps): AgentModel;
  /** The survey's outline and writer roles (on the reasoner model). @throws as `chat`. */
  survey(deps?: Deps): SurveyModel;
}

/** What a load learned, without the builders (a host that only sizes runs: the CLI's defaults). */
export type LoadedModel = Pick<LoadedModels<never>, 'contextTokens' | 'runDefaults'>;

/** The run options a model's profile may default (tokens for `chunkTokens`). */
export type ModelRunDefaults = Partial<Pick<RunOptions, 'chunkTokens' | 'karFirstK' | 'reasonerBudgetTokens'>>;

/** One problem of a Lambda environment for a spec: the variable (e.g. `MODEL_SPEC`) and what is wrong. */
export interface LambdaEnvIssue {
  variable: string;
  message: string;
}

/** A Lambda function's environment as a provider reads it: the variables after lambdas/adapters/env.ts parsed them (numbers for the numeric ones). */
export type LambdaEnvironment = Readonly<Record<string, unknown>>;

/**
 * One model provider. `load` returns the spec's builders (`LoadedModels`), which are synchronous
 * (the handlers build their model on first use inside a task's error handling): a provider whose
 * models must be read into memory first (`llama:`) reads them in `load`; a service's `load` reads
 * nothing.
 */
export interface ModelProvider<K extends ModelKind, D = unknown> {
  readonly kind: K;
  /**
   * What can be checked on this machine without a request or credentials, before any work (the
   * CLI's checks: an `openai:` server's settings, a `llama:` model's files).
   * @throws ConfigurationError naming the setting or file and the problem.
   */
  checkSettings(spec: SpecOf<K>): Promise<void>;
  /**
   * What a local stack checks before it starts, so a missing setting is one clear error instead of
   * every seeking agent failing (Bedrock: a region and credentials).
   * @throws ModelConfigurationError / ConfigurationError naming what is missing.
   */
  checkAccess(spec: SpecOf<K>): Promise<void>;
  /**
   * Load what the builders need (an in-process model: once per process and file; nothing for a
   * service) and return the builders with the context size.
   * @throws ConfigurationError for a bad model file; the provider's load errors.
   */
  load(spec: SpecOf<K>, options: LoadOptions): Promise<LoadedModels<DepsFor<K, D>>>;
  /** How the cost estimate (shared/cost.ts) prices the spec: the price table's key per role, whether the seeker caches prompts, or why it has no price. */
  pricing(spec: SpecOf<K>): ModelPricing;
  /** The model of each role as the eval's records name it (`extractive`, a model id, `llama:<file name>`). */
  recordIds(spec: SpecOf<K>): Record<AgentRole, string>;
  /**
   * The provider's own dependencies in a Lambda container, built once at cold start from the
   * function's environment (validated first: `lambdaEnvIssues`) with what the host lends (tracing,
   * logging); undefined when it needs none. The container passes them under the kind's key.
   */
  lambdaDeps(spec: SpecOf<K>, env: LambdaEnvironment, host: LambdaHost): D | undefined;
  /** What a Lambda environment lacks for this spec (the AWS stack's functions validate it at cold start: lambdas/adapters/env.ts). */
  lambdaEnvIssues(spec: SpecOf<K>, env: LambdaEnvironment): LambdaEnvIssue[];
}
