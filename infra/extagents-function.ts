/**
 * A Lambda function with the project's defaults: Node.js 24 on ARM64, X-Ray active tracing, an
 * explicit log group with retention, its own execution role (least privilege: writing to its log
 * group, no AWS managed policy), and local esbuild bundling that keeps class names.
 */
import * as path from 'node:path';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ConfigurationError } from '../shared/errors';
import { acknowledge } from './nag';

/** Repository root (the folder holding package.json and package-lock.json). */
export const PROJECT_ROOT = path.resolve(__dirname, '..');

/** The five Lambda handlers of the workflow, named after their entry files `lambdas/<name>.ts`. */
export type HandlerName = 'prepare' | 'seek' | 'reason' | 'synchronize' | 'finalize';

/** All handler names, in workflow order. */
export const HANDLER_NAMES: readonly HandlerName[] = ['prepare', 'seek', 'reason', 'synchronize', 'finalize'];

/** Memory (MB) and timeout of one handler. */
export interface FunctionSizing {
  /** Memory size in MB (Lambda also scales CPU with it: 1,769 MB = one vCPU). */
  memorySize: number;
  timeout: Duration;
}

/**
 * Per-handler sizing. Prepare decodes and chunks the whole corpus (CPU and memory bound, up to the
 * 15-minute Lambda maximum); Seek and Reason wait on one model call each; the others are light.
 */
export const FUNCTION_SIZING: Readonly<Record<HandlerName, FunctionSizing>> = {
  prepare: { memorySize: 2048, timeout: Duration.minutes(15) },
  // Seek / Reason: up to 4 model calls (one retry of an empty or cut-off reply, one re-ask for the
  // score, one shrunken resend after a context overflow) x 2 SDK attempts x 60 s socket timeout
  // = 8 minutes in the worst case (models/bedrock/bedrock.ts), so 10 minutes.
  seek: { memorySize: 1024, timeout: Duration.minutes(10) },
  reason: { memorySize: 1024, timeout: Duration.minutes(10) },
  synchronize: { memorySize: 512, timeout: Duration.minutes(1) },
  finalize: { memorySize: 512, timeout: Duration.minutes(1) },
};

/** Properties of {@link ExtAgentsFunction}. */
export interface ExtAgentsFunctionProps {
  /**
   * Which entry module: bundles `lambdas/<handler>.ts`. A workflow handler (HandlerName) gets its
   * sizing from FUNCTION_SIZING; any other entry (e.g. the upload triggers') must give `sizing`.
   */
  readonly handler: HandlerName | (string & {});
  /** The exported function of the entry module. @default "handler" */
  readonly exportName?: string;
  /** Memory and timeout. @default FUNCTION_SIZING[handler] (required for other entries) */
  readonly sizing?: FunctionSizing;
  /** Environment variables (the project's common variables are added by the stack). */
  readonly environment: Record<string, string>;
  /** Retention of the function's log group. */
  readonly logRetention: logs.RetentionDays;
  /**
   * How the function's concurrency is bounded: `{ reserved: n }` reserves n concurrent executions
   * (ReservedConcurrentExecutions: a cap, and capacity kept from the rest of the account), or
   * `{ boundBy: reason }` says what already bounds it (a state machine's MaxConcurrency, API stage
   * throttling, an event source's maximum concurrency), recorded as the reviewed answer to checkov's
   * CKV_AWS_115 (infra/nag.ts).
   */
  readonly concurrency: { readonly reserved: number } | { readonly boundBy: string };
}

/**
 * One workflow handler as a `NodejsFunction`.
 *
 * - Runtime `nodejs24.x` (the newest Node.js runtime aws-cdk-lib offers), `arm64`, active tracing.
 * - Log group created explicitly (retention, removed with the stack) and passed as `logGroup`.
 * - Bundled with the locally installed esbuild (no Docker): CommonJS, minified with
 *   `keepNames: true` because error class names (`ModelThrottledError`, …) are what Step Functions
 *   Retry/Catch match on; source maps on (`NODE_OPTIONS=--enable-source-maps` is set by the stack).
 * - The AWS SDK v3 is bundled (`bundleAwsSDK: true`) so the deployed code runs the SDK version the
 *   tests ran, not the one the runtime happens to ship.
 *
 * Source: https://docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.aws_lambda_nodejs-readme.html
 */
export class ExtAgentsFunction extends nodejs.NodejsFunction {
  /** The function's explicit log group. */
  public readonly logGroupResource: logs.LogGroup;

  constructor(scope: Construct, id: string, props: ExtAgentsFunctionProps) {
    const logGroup = new logs.LogGroup(scope, `${id}LogGroup`, {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const sizing = props.sizing ?? (FUNCTION_SIZING as Partial<Record<string, FunctionSizing>>)[props.handler];
    if (sizing === undefined) throw new ConfigurationError(`ExtAgentsFunction ${id}: entry "${props.handler}" needs an explicit sizing`);
    // An explicit role instead of CDK's default one with the AWS managed AWSLambdaBasicExecutionRole
    // (logs:CreateLogGroup/CreateLogStream/PutLogEvents on every log group): this function only
    // writes to its own log group, which exists already.
    const role = new iam.Role(scope, `${id}Role`, {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of ${id} (lambdas/${props.handler}.ts)`,
    });
    logGroup.grantWrite(role);
    super(scope, id, {
      entry: path.join(PROJECT_ROOT, 'lambdas', `${props.handler}.ts`),
      handler: props.exportName ?? 'handler',
      role,
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: path.join(PROJECT_ROOT, 'package-lock.json'),
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: sizing.memorySize,
      timeout: sizing.timeout,
      tracing: lambda.Tracing.ACTIVE,
      logGroup,
      environment: props.environment,
      ...('reserved' in props.concurrency && { reservedConcurrentExecutions: props.concurrency.reserved }),
      bundling: {
        format: nodejs.OutputFormat.CJS,
        minify: true,
        keepNames: true,
        sourceMap: true,
        sourcesContent: false,
        bundleAwsSDK: true,
        // The model table (models/index.ts) reaches the llama: provider, whose node-llama-cpp (native, local
        // commands only: a llama: spec is refused at synth and by the functions' environment check) stays out.
        externalModules: ['node-llama-cpp'],
        forceDockerBundling: false,
        tsconfig: path.join(PROJECT_ROOT, 'tsconfig.json'),
      },
    });
    this.logGroupResource = logGroup;
    if ('boundBy' in props.concurrency)
      acknowledge(this, { checkov: ['CKV_AWS_115'], resourceTypes: ['AWS::Lambda::Function'], reason: props.concurrency.boundBy });
  }
}
