/**
 * From a CDK-synthesized CloudFormation template to a plain Amazon States Language (ASL) definition
 * that `aws-local-stepfunctions` can run:
 *
 * 1. `resolveStateMachineDefinition`: finds the `AWS::StepFunctions::StateMachine`, resolves the
 *    intrinsic functions of its `DefinitionString` (CDK renders it as `Fn::Join` of `Ref` and
 *    `Fn::GetAtt`) to local values, applies `DefinitionSubstitutions` and parses the JSON.
 * 2. `localizeDistributedMaps`: replaces every Distributed Map state (which the library does not
 *    implement) by a Task state of the same name whose Resource is `LOCAL_DISTRIBUTED_MAP_RESOURCE`,
 *    returning the removed Map states so that local/distributed-map.ts can emulate them.
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
import { ConfigurationError, ExtAgentsError } from '../shared/errors';

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

/** The parts of a CloudFormation template this module reads. */
export interface CfnTemplate {
  Resources?: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
  Parameters?: Record<string, { Type?: string; Default?: unknown }>;
}

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
export function resolveStateMachineDefinition(
  template: object,
  logicalIdOfStateMachine?: string,
  options: LocalResolveOptions = {},
): ResolvedStateMachine {
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

  const resolver = new IntrinsicResolver(cfn, options);
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
    lambdaArns: resolver.namesOf('AWS::Lambda::Function', (id) => localLambdaArn(id, options)),
    bucketNames: resolver.namesOf('AWS::S3::Bucket', (id) => resolver.bucketName(id)),
    tableNames: resolver.namesOf('AWS::DynamoDB::Table', (id) => resolver.tableName(id)),
  };
}

/**
 * Resolves CloudFormation intrinsic functions against local values. Hand-written: the CDK's own
 * token resolution runs at synth time only and yields these same intrinsics; there is no library that
 * evaluates a template locally with caller-chosen values, and five functions suffice for CDK output.
 */
class IntrinsicResolver {
  private readonly resources: NonNullable<CfnTemplate['Resources']>;
  private readonly region: string;
  private readonly account: string;

  constructor(
    private readonly template: CfnTemplate,
    private readonly options: LocalResolveOptions,
  ) {
    this.resources = template.Resources ?? {};
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

  resolve(value: unknown, where: string): unknown {
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map((v, i) => this.resolve(v, `${where}[${i}]`));
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 1) {
      const [key, arg] = entries[0];
      if (key === 'Ref') return this.ref(String(arg), where);
      if (key === 'Fn::GetAtt') {
        const [id, attr] = Array.isArray(arg) ? [String(arg[0]), String(arg[1])] : splitOnce(String(arg), '.');
        return this.getAtt(id, attr, where);
      }
      if (key === 'Fn::Join') {
        const [separator, parts] = arg as [string, unknown[]];
        const resolvedParts = this.resolve(parts, where);
        if (!Array.isArray(resolvedParts)) throw new ConfigurationError(`Fn::Join at ${where}: the list did not resolve to an array`);
        return resolvedParts.map((p) => scalarToString(p, where)).join(separator);
      }
      if (key === 'Fn::Select') {
        const [index, list] = arg as [unknown, unknown];
        const resolvedList = this.resolve(list, where);
        if (!Array.isArray(resolvedList)) throw new ConfigurationError(`Fn::Select at ${where}: the list did not resolve to an array`);
        return resolvedList[Number(this.resolve(index, where))];
      }
      if (key === 'Fn::Sub') return this.sub(arg, where);
      if (key.startsWith('Fn::')) throw new ConfigurationError(`Intrinsic function ${key} at ${where} is not supported locally`);
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of entries) out[k] = this.resolve(v, `${where}.${k}`);
    return out;
  }

  private sub(arg: unknown, where: string): string {
    const [text, variables] = Array.isArray(arg) ? [String(arg[0]), (arg[1] ?? {}) as Record<string, unknown>] : [String(arg), {}];
    return text.replace(/\$\{(!?)([^}]*)\}/g, (_whole, bang: string, name: string) => {
      if (bang) return `\${${name}}`; // `${!Literal}` renders `${Literal}`
      if (Object.prototype.hasOwnProperty.call(variables, name)) return scalarToString(this.resolve(variables[name], where), where);
      if (name.includes('.')) {
        const [id, attr] = splitOnce(name, '.');
        return scalarToString(this.getAtt(id, attr, where), where);
      }
      return scalarToString(this.ref(name, where), where);
    });
  }

  private ref(name: string, where: string): unknown {
    switch (name) {
      case 'AWS::Partition':
        return 'aws';
      case 'AWS::Region':
        return this.region;
      case 'AWS::AccountId':
        return this.account;
      case 'AWS::URLSuffix':
        return 'amazonaws.com';
      case 'AWS::StackName':
        return 'local';
      default:
        break;
    }
    const parameter = this.template.Parameters?.[name];
    if (parameter !== undefined) {
      if (parameter.Default === undefined) throw new ConfigurationError(`Ref to template parameter '${name}' without a Default at ${where}`);
      return parameter.Default;
    }
    const resource = this.resources[name];
    if (resource === undefined) throw new ConfigurationError(`Ref to unknown logical id '${name}' at ${where}`);
    switch (resource.Type) {
      case 'AWS::Lambda::Function':
        return name;
      case 'AWS::S3::Bucket':
        return this.bucketName(name);
      case 'AWS::DynamoDB::Table':
        return this.tableName(name);
      case 'AWS::StepFunctions::StateMachine':
        return `arn:aws:states:${this.region}:${this.account}:stateMachine:${name}`;
      case 'AWS::IAM::Role':
        return name;
      default:
        throw new ConfigurationError(`Ref to ${name} (${resource.Type}) at ${where} has no local value`);
    }
  }

  private getAtt(id: string, attr: string, where: string): unknown {
    const resource = this.resources[id];
    if (resource === undefined) throw new ConfigurationError(`Fn::GetAtt of unknown logical id '${id}' at ${where}`);
    const key = `${resource.Type}.${attr}`;
    switch (key) {
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
        throw new ConfigurationError(`Fn::GetAtt ${id}.${attr} (${resource.Type}) at ${where} has no local value`);
    }
  }
}

function splitOnce(text: string, separator: string): [string, string] {
  const at = text.indexOf(separator);
  return at < 0 ? [text, ''] : [text.slice(0, at), text.slice(at + separator.length)];
}

function scalarToString(value: unknown, where: string): string {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new ConfigurationError(`Expected a string at ${where}, got ${JSON.stringify(value)}`);
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
}

/** Fields a Map state shares with a Task state; the stand-in Task keeps them (when present). */
const KEPT_FIELDS = ['Comment', 'InputPath', 'ResultSelector', 'ResultPath', 'OutputPath', 'Next', 'End', 'Retry', 'Catch'] as const;

/** True when a state is a Map state in distributed mode. */
export function isDistributedMap(state: AslState): state is DistributedMapState {
  if (state.Type !== 'Map') return false;
  const processor = state.ItemProcessor as { ProcessorConfig?: { Mode?: string } } | undefined;
  return processor?.ProcessorConfig?.Mode === 'DISTRIBUTED';
}

/**
 * Replace every Distributed Map state (at any depth: top level, inline Map item processors, Parallel
 * branches, other Distributed Maps) by a Task state of the same name with Resource
 * `LOCAL_DISTRIBUTED_MAP_RESOURCE`, keeping `Comment`, `InputPath`, `ResultSelector`, `ResultPath`,
 * `OutputPath`, `Next`/`End`, `Retry` and `Catch` (only when present: an absent `ResultPath` means
 * `$`, a null one discards). The input is not modified.
 *
 * @returns the new definition and the removed Map states by name.
 * @throws ConfigurationError when two states anywhere in the definition share a name (task overrides
 *   of the local engine are keyed by state name).
 */
export function localizeDistributedMaps(definition: AslDefinition): LocalizedDefinition {
  const copy = structuredClone(definition);
  const distributedMaps: Record<string, DistributedMapState> = {};
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
      }
    }
  };
  visit(copy);
  return { definition: copy, distributedMaps };
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
