/**
 * From a CDK-synthesized CloudFormation template to a plain Amazon States Language (ASL) definition
 * that `aws-local-stepfunctions` can run:
 *
 * 1. `resolveStateMachineDefinition`: finds the `AWS::StepFunctions::StateMachine`, resolves the
 *    intrinsic functions of its `DefinitionString` (CDK renders it as `Fn::Join` of `Ref` and
 *    `Fn::GetAtt`) to local values, applies `DefinitionSubstitutions` and parses the JSON.
 * 2. `localizeDistributedMaps`: replaces every Distributed Map state (which the library does not
 *    implement) by a Task state of the same name whose Resource is `LOCAL_DISTRIBUTED_MAP_RESOURCE`,
 *    returning the removed Map states so that local/engine/distributed-map.ts can emulate them.
 *
 * Local values: a Lambda function's ARN is `arn:aws:lambda:<region>:<account>:function:<LogicalId>`
 * (so every Lambda Task maps back to the function that defines it), a bucket's name defaults to its
 * logical id in lower case, a table's name to its logical id.
 *
 * Sources: CloudFormation intrinsic function reference
 * (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/intrinsic-function-reference.html),
 * return values of AWS::Lambda::Function, AWS::S3::Bucket, AWS::DynamoDB::Table (the "Return values"
 * section of each resource page), AWS::StepFunctions::StateMachine `DefinitionString` and
 * `DefinitionSubstitutions`, and the Map state in distributed mode
 * (https://docs.aws.amazon.com/step-functions/latest/dg/state-map-distributed.html).
 */
import { ConfigurationError, ExtAgentsError } from '../../shared/errors';
import { IntrinsicResolver, type CfnResource, type CfnTemplate, type IntrinsicValues } from '../../infra/intrinsics';

// ---------------------------------------------------------------------------------------------
// ASL shapes (JSONPath; the fields the local engine reads are typed, the rest passes through)
// ---------------------------------------------------------------------------------------------

/** A JSON value as ASL carries it. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A JSON object (payload templates: `Parameters`, `ItemSelector`, `ResultSelector`). */
export type JsonObject = { [key: string]: JsonValue };

/** One ASL retrier (`Retry` element); intervals in seconds as in ASL. */
export interface AslRetrier {
  ErrorEquals: string[];
  IntervalSeconds?: number;
  MaxAttempts?: number;
  BackoffRate?: number;
  MaxDelaySeconds?: number;
  JitterStrategy?: 'FULL' | 'NONE';
}

/** One ASL catcher (`Catch` element). */
export interface AslCatcher {
  ErrorEquals: string[];
  Next: string;
  ResultPath?: string | null;
}

/**
 * Any ASL state. `Type` and the common fields are typed; state-specific fields (`Choices`,
 * `Branches`, `Seconds`, ...) pass through as `unknown` to the library.
 */
export interface AslState {
  Type: string;
  Comment?: string;
  Next?: string;
  End?: boolean;
  InputPath?: string | null;
  OutputPath?: string | null;
  ResultPath?: string | null;
  ResultSelector?: JsonObject;
  Parameters?: JsonValue;
  Resource?: string;
  TimeoutSeconds?: number;
  Retry?: AslRetrier[];
  Catch?: AslCatcher[];
  QueryLanguage?: string;
  [field: string]: unknown;
}

/** A state machine (or a Map `ItemProcessor`, or a Parallel branch). */
export interface AslDefinition {
  StartAt: string;
  States: Record<string, AslState>;
  Comment?: string;
  Version?: string;
  TimeoutSeconds?: number;
  QueryLanguage?: string;
  [field: string]: unknown;
}

/** `ItemReader` of a Distributed Map (JSONPath form). */
export interface AslItemReader {
  /** `arn:aws:states:::s3:getObject` (JSON / JSONL object) or `arn:aws:states:::s3:listObjectsV2`. */
  Resource: string;
  ReaderConfig?: {
    InputType?: 'JSON' | 'JSONL' | 'CSV' | 'MANIFEST' | 'PARQUET';
    /** At most this many items are read (1..100,000,000). */
    MaxItems?: number;
    MaxItemsPath?: string;
    [field: string]: unknown;
  };
  /** `{ Bucket, Key }` (each may be given as a `.$` path). */
  Parameters?: JsonObject;
}

/** `ResultWriter` of a Distributed Map (JSONPath form). */
export interface AslResultWriter {
  /** `arn:aws:states:::s3:putObject` when results are exported. */
  Resource?: string;
  /** `{ Bucket, Prefix }` (each may be given as a `.$` path). */
  Parameters?: JsonObject;
  WriterConfig?: { Transformation?: 'NONE' | 'COMPACT' | 'FLATTEN'; OutputType?: 'JSON' | 'JSONL' };
}

/**
 * A Map state in distributed mode (`ItemProcessor.ProcessorConfig.Mode` = `DISTRIBUTED`), as it
 * appears in the definition. Source: "Map state in Distributed mode", Step Functions Developer Guide.
 */
export interface DistributedMapState extends AslState {
  Type: 'Map';
  ItemProcessor: AslDefinition & { ProcessorConfig?: { Mode?: string; ExecutionType?: string } };
  ItemReader?: AslItemReader;
  ItemsPath?: string;
  ItemSelector?: JsonObject;
  ItemBatcher?: JsonObject;
  MaxConcurrency?: number;
  MaxConcurrencyPath?: string;
  /** Percent, 0-100. */
  ToleratedFailurePercentage?: number;
  ToleratedFailurePercentagePath?: string;
  /** Items. */
  ToleratedFailureCount?: number;
  ToleratedFailureCountPath?: string;
  ResultWriter?: AslResultWriter;
  Label?: string;
}

/** Resource of the Task that stands in for a Distributed Map state in the localized definition. */
export const LOCAL_DISTRIBUTED_MAP_RESOURCE = 'arn:aws:states:::local:distributed-map';

/**
 * An error whose `name` is a Step Functions predefined error name (`States.*`), so that `Retry` and
 * `Catch` of the local definition match it as they match the real service's error.
 * Source: "Error names", Step Functions Developer Guide
 * (https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html).
 */
export class StatesError extends ExtAgentsError {
  /**
   * False for the terminal errors `States.Runtime` and `States.DataLimitExceeded`, which no retrier
   * (not even `States.ALL`) matches; read by aws-local-stepfunctions (`error.isRetryable ?? true`).
   */
  readonly isRetryable: boolean;
  /** False for the terminal errors, which no catcher matches (read as `error.isCatchable ?? true`). */
  readonly isCatchable: boolean;

  constructor(name: StatesErrorName, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = name;
    const terminal = name === 'States.Runtime' || name === 'States.DataLimitExceeded';
    this.isRetryable = !terminal;
    this.isCatchable = !terminal;
  }
}

/** The predefined error names the local engine raises itself. */
export type StatesErrorName =
  | 'States.ExceedToleratedFailureThreshold'
  | 'States.ItemReaderFailed'
  | 'States.ResultWriterFailed'
  | 'States.DataLimitExceeded'
  | 'States.Runtime';

// ---------------------------------------------------------------------------------------------
// Template resolution
// ---------------------------------------------------------------------------------------------

/** The parts of a CloudFormation template this module reads (infra/intrinsics.ts). */
export type { CfnTemplate } from '../../infra/intrinsics';

/** Local values substituted for account-level and per-resource references. */
export interface LocalResolveOptions {
  /** Region in local ARNs and `AWS::Region`. Default `local`. */
  region?: string;
  /** Account id in local ARNs and `AWS::AccountId`. Default `000000000000`. */
  accountId?: string;
  /** Bucket name per logical id. Default: the literal `BucketName`, else the logical id in lower case. */
  bucketNames?: Record<string, string>;
  /** Table name per logical id. Default: the literal `TableName`, else the logical id. */
  tableNames?: Record<string, string>;
}

/** What `resolveStateMachineDefinition` returns. */
export interface ResolvedStateMachine {
  /** The plain ASL definition, every reference replaced by its local value. */
  definition: AslDefinition;
  /** Logical id of the state machine resource that was resolved. */
  stateMachineLogicalId: string;
  /** Local ARN of every `AWS::Lambda::Function` of the template, by logical id. */
  lambdaArns: Record<string, string>;
  /** Local name of every `AWS::S3::Bucket`, by logical id. */
  bucketNames: Record<string, string>;
  /** Local name of every `AWS::DynamoDB::Table`, by logical id. */
  tableNames: Record<string, string>;
}

const DEFAULT_REGION = 'local';
const DEFAULT_ACCOUNT = '000000000000';

/**
 * The local ARN of a Lambda function: `arn:aws:lambda:<region>:<account>:function:<logicalId>`.
 * @param logicalId the function's logical id in the template.
 */
export function localLambdaArn(logicalId: string, options: LocalResolveOptions = {}): string {
  return `arn:aws:lambda:${options.region ?? DEFAULT_REGION}:${options.accountId ?? DEFAULT_ACCOUNT}:function:${logicalId}`;
}

/**
 * Resolve the definition of a state machine of a synthesized template to plain ASL with local values.
 *
 * @param template the synthesized template (`Template.fromStack(stack).toJSON()` or cdk.out JSON).
 * @param logicalIdOfStateMachine which `AWS::StepFunctions::StateMachine`; optional when there is one.
 * @param options local region, account and resource names.
 * @returns the parsed definition and the local names of the template's functions, buckets, tables.
 * @throws ConfigurationError when the state machine is missing or ambiguous, when a reference
 *   points to a resource or attribute without a local value, or when an intrinsic function is not
 *   supported (`Fn::Join`, `Fn::Sub`, `Fn::Select`, `Ref`, `Fn::GetAtt` are), or when the resolved
 *   definition is not valid JSON.
 */
export function resolveStateMachineDefinition(template: object, logicalIdOfStateMachine?: string, options: LocalResolveOptions = {}): ResolvedStateMachine {
  const cfn = template as CfnTemplate;
  const resources = cfn.Resources ?? {};
  const machines = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::StepFunctions::StateMachine');
  let machineId: string;
  if (logicalIdOfStateMachine !== undefined) {
    if (resources[logicalIdOfStateMachine]?.Type !== 'AWS::StepFunctions::StateMachine') {
      throw new ConfigurationError(
        `No AWS::StepFunctions::StateMachine with logical id '${logicalIdOfStateMachine}' in the template ` +
          `(state machines: ${machines.map(([id]) => id).join(', ') || 'none'})`,
      );
    }
    machineId = logicalIdOfStateMachine;
  } else {
    if (machines.length !== 1) {
      throw new ConfigurationError(
        `Expected exactly one AWS::StepFunctions::StateMachine in the template, found ${machines.length}` +
          (machines.length ? ` (${machines.map(([id]) => id).join(', ')}); pass its logical id` : ''),
      );
    }
    machineId = machines[0][0];
  }

  const values = new LocalValues(resources, options);
  const resolver = new IntrinsicResolver(cfn, values);
  const props = resources[machineId].Properties ?? {};
  let text: string;
  if (props.DefinitionString !== undefined) {
    const resolved = resolver.resolve(props.DefinitionString, `${machineId}.DefinitionString`);
    if (typeof resolved !== 'string') {
      throw new ConfigurationError(`${machineId}.DefinitionString did not resolve to a string`);
    }
    text = resolved;
  } else if (props.Definition !== undefined) {
    text = JSON.stringify(resolver.resolve(props.Definition, `${machineId}.Definition`));
  } else {
    throw new ConfigurationError(`${machineId} has neither DefinitionString nor Definition (DefinitionS3Location is not supported locally)`);
  }
  if (props.DefinitionSubstitutions !== undefined) {
    const substitutions = resolver.resolve(props.DefinitionSubstitutions, `${machineId}.DefinitionSubstitutions`) as Record<string, unknown>;
    // DefinitionSubstitutions replace `${name}` placeholders in the definition (CloudFormation docs).
    text = text.replace(/\$\{([^}]+)\}/g, (whole, key: string) =>
      Object.prototype.hasOwnProperty.call(substitutions, key) ? String(substitutions[key]) : whole,
    );
  }
  let definition: AslDefinition;
  try {
    definition = JSON.parse(text) as AslDefinition;
  } catch (error) {
    throw new ConfigurationError(`The resolved definition of ${machineId} is not valid JSON`, { cause: error });
  }
  return {
    definition,
    stateMachineLogicalId: machineId,
    lambdaArns: values.namesOf('AWS::Lambda::Function', (id) => localLambdaArn(id, options)),
    bucketNames: values.namesOf('AWS::S3::Bucket', (id) => values.bucketName(id)),
    tableNames: values.namesOf('AWS::DynamoDB::Table', (id) => values.tableName(id)),
  };
}

/**
 * The local values of a template's references (infra/intrinsics.ts resolves the intrinsics): a
 * Lambda function is its logical id (ARN {@link localLambdaArn}), a bucket its `BucketName` or logical
 * id in lower case, a table its `TableName` or logical id, a state machine an ARN of its logical id.
 */
class LocalValues implements IntrinsicValues {
  readonly label = 'local';
  readonly partition = 'aws';
  readonly urlSuffix = 'amazonaws.com';
  readonly stackName = 'local';
  readonly region: string;
  readonly account: string;

  constructor(
    private readonly resources: Record<string, CfnResource>,
    private readonly options: LocalResolveOptions,
  ) {
    this.region = options.region ?? DEFAULT_REGION;
    this.account = options.accountId ?? DEFAULT_ACCOUNT;
  }

  namesOf(type: string, name: (logicalId: string) => string): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [id, resource] of Object.entries(this.resources)) if (resource.Type === type) out[id] = name(id);
    return out;
  }

  bucketName(id: string): string {
    const literal = this.resources[id]?.Properties?.BucketName;
    return this.options.bucketNames?.[id] ?? (typeof literal === 'string' ? literal : id.toLowerCase());
  }

  tableName(id: string): string {
    const literal = this.resources[id]?.Properties?.TableName;
    return this.options.tableNames?.[id] ?? (typeof literal === 'string' ? literal : id);
  }

  ref(id: string, resource: CfnResource): string | undefined {
    switch (resource.Type) {
      case 'AWS::Lambda::Function':
      case 'AWS::IAM::Role':
        return id;
      case 'AWS::S3::Bucket':
        return this.bucketName(id);
      case 'AWS::DynamoDB::Table':
        return this.tableName(id);
      case 'AWS::StepFunctions::StateMachine':
        return `arn:aws:states:${this.region}:${this.account}:stateMachine:${id}`;
      default:
        return undefined;
    }
  }

  getAtt(id: string, attr: string, resource: CfnResource): string | undefined {
    switch (`${resource.Type}.${attr}`) {
      case 'AWS::Lambda::Function.Arn':
        return localLambdaArn(id, this.options);
      case 'AWS::S3::Bucket.Arn':
        return `arn:aws:s3:::${this.bucketName(id)}`;
      case 'AWS::S3::Bucket.DomainName':
        return `${this.bucketName(id)}.s3.amazonaws.com`;
      case 'AWS::S3::Bucket.RegionalDomainName':
        return `${this.bucketName(id)}.s3.${this.region}.amazonaws.com`;
      case 'AWS::DynamoDB::Table.Arn':
        return `arn:aws:dynamodb:${this.region}:${this.account}:table/${this.tableName(id)}`;
      case 'AWS::StepFunctions::StateMachine.Arn':
        return `arn:aws:states:${this.region}:${this.account}:stateMachine:${id}`;
      case 'AWS::StepFunctions::StateMachine.Name':
        return id;
      case 'AWS::IAM::Role.Arn':
        return `arn:aws:iam::${this.account}:role/${id}`;
      default:
        return undefined;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Distributed Map localization
// ---------------------------------------------------------------------------------------------

/** What `localizeDistributedMaps` returns. */
export interface LocalizedDefinition {
  /** A copy of the definition where every Distributed Map state is a local Task of the same name. */
  definition: AslDefinition;
  /**
   * The removed Distributed Map states, by state name, as they were (their own ItemProcessor is
   * localized too, so a Distributed Map nested in another is also a local Task there).
   */
  distributedMaps: Record<string, DistributedMapState>;
  /**
   * The removed Parallel states, by state name, their branches localized (see
   * `LOCAL_PARALLEL_RESOURCE`).
   */
  parallels: Record<string, ParallelState>;
}

/** A Parallel state as it appears in the definition. */
export interface ParallelState extends AslState {
  Type: 'Parallel';
  Branches: AslDefinition[];
}

/**
 * Resource of the Task that stands in for a Parallel state in the localized definition
 * (local/engine/parallel.ts): the library's own Parallel state cannot stop a Distributed Map Run
 * started in a branch when another branch fails, which the service does.
 */
export const LOCAL_PARALLEL_RESOURCE = 'arn:aws:states:::local:parallel';

/** Fields a Map state shares with a Task state; the stand-in Task keeps them (when present). */
const KEPT_FIELDS = ['Comment', 'InputPath', 'ResultSelector', 'ResultPath', 'OutputPath', 'Next', 'End', 'Retry', 'Catch'] as const;
/** Fields a Parallel state shares with a Task state (its `Parameters` too); the stand-in Task keeps them. */
const KEPT_PARALLEL_FIELDS = [...KEPT_FIELDS, 'Parameters'] as const;

/** True when a state is a Map state in distributed mode. */
export function isDistributedMap(state: AslState): state is DistributedMapState {
  if (state.Type !== 'Map') return false;
  const processor = state.ItemProcessor as { ProcessorConfig?: { Mode?: string } } | undefined;
  return processor?.ProcessorConfig?.Mode === 'DISTRIBUTED';
}

/**
 * Replace every Parallel state by a Task state of the same name with Resource
 * `LOCAL_PARALLEL_RESOURCE` (keeping the fields below and `Parameters`; its branches, localized,
 * are returned in `parallels`), and every Distributed Map state (at any depth: top level, inline Map
 * item processors, Parallel branches, other Distributed Maps) by a Task state of the same name with Resource
 * `LOCAL_DISTRIBUTED_MAP_RESOURCE`, keeping `Comment`, `InputPath`, `ResultSelector`, `ResultPath`,
 * `OutputPath`, `Next`/`End`, `Retry` and `Catch` (only when present: an absent `ResultPath` means
 * `$`, a null one discards). The input is not modified.
 *
 * @returns the new definition and the removed Map states by name.
 * @throws ConfigurationError when two states anywhere in the definition share a name (task overrides
 *   of the local engine are keyed by state name).
 */
export function localizeDistributedMaps(definition: AslDefinition): LocalizedDefinition {
  // A JSON copy, not structuredClone: under jest, structuredClone makes objects of Node's own realm,
  // which aws-local-stepfunctions' plain-object check (a prototype comparison) rejects, so a nested
  // payload template (ResultSelector `{adopted: {…}}`) would pass through unevaluated.
  const copy = JSON.parse(JSON.stringify(definition)) as AslDefinition;
  const distributedMaps: Record<string, DistributedMapState> = {};
  const parallels: Record<string, ParallelState> = {};
  const seen = new Set<string>();
  const visit = (machine: AslDefinition): void => {
    for (const [name, state] of Object.entries(machine.States)) {
      if (seen.has(name)) throw new ConfigurationError(`State name '${name}' is used more than once in the definition`);
      seen.add(name);
      for (const child of childMachines(state)) visit(child);
      if (isDistributedMap(state)) {
        distributedMaps[name] = state;
        const task: AslState = { Type: 'Task', Resource: LOCAL_DISTRIBUTED_MAP_RESOURCE };
        for (const field of KEPT_FIELDS) if (field in state) (task as Record<string, unknown>)[field] = state[field];
        machine.States[name] = task;
      } else if (state.Type === 'Parallel') {
        // After its branches were localized above.
        parallels[name] = state as ParallelState;
        const task: AslState = { Type: 'Task', Resource: LOCAL_PARALLEL_RESOURCE };
        for (const field of KEPT_PARALLEL_FIELDS) if (field in state) (task as Record<string, unknown>)[field] = state[field];
        machine.States[name] = task;
      }
    }
  };
  visit(copy);
  return { definition: copy, distributedMaps, parallels };
}

/** The nested state machines of a state: a Map's ItemProcessor (or legacy Iterator), a Parallel's Branches. */
export function childMachines(state: AslState): AslDefinition[] {
  if (state.Type === 'Map') {
    const processor = (state.ItemProcessor ?? state.Iterator) as AslDefinition | undefined;
    return processor ? [processor] : [];
  }
  if (state.Type === 'Parallel') return (state.Branches as AslDefinition[] | undefined) ?? [];
  return [];
}

/**
 * Every state of a definition at any depth, with its name (depth-first, definition order).
 * Useful for checks over the whole machine (e.g. every Lambda Task has a local handler).
 */
export function allStates(definition: AslDefinition): Array<[string, AslState]> {
  const out: Array<[string, AslState]> = [];
  const visit = (machine: AslDefinition): void => {
    for (const [name, state] of Object.entries(machine.States)) {
      out.push([name, state]);
      for (const child of childMachines(state)) visit(child);
    }
  };
  visit(definition);
  return out;
}
