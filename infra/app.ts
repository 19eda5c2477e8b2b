/**
 * CDK app entry (`cdk.json`: `npx tsx infra/app.ts`).
 *
 * Context (`cdk synth -c key=value` or cdk.json):
 *   model      model spec, e.g. `extractive`, `bedrock:<seekerModelId>,<reasonerModelId>` or
 *              `openai:<model>[,<reasonerModel>]` (default: DEFAULT_MODEL_SPEC, Llama 3.1 8B seekers
 *              and Llama 3.3 70B reasoner through US cross-region inference profiles)
 *   openaiBaseUrl          API root of the OpenAI-compatible server of an `openai:` spec, with its
 *                          version path (`https://<host>/v1`): required with such a spec, https://
 *                          only (read by the stack itself)
 *   openaiApiKeySecretName name of a Secrets Manager secret (same account and region) holding that
 *                          server's API key; only the model-calling functions may read it (default:
 *                          requests carry no key; read by the stack itself)
 *   stackName  construct id and CloudFormation stack name (default `ExtAgents`)
 *   retentionDays          days run data is kept: DynamoDB TTL and S3 expiry of runs/ (default 30)
 *   ingestChunkTokens      L of the chunks cached by ingestion of corpora/<id>/ (default 8000)
 *   jobConcurrency         questions of one job running at once (default 4)
 *   alarmEmail             e-mail subscribed to an SNS topic the alarms notify (default: no topic)
 *   stateMachineLogLevel   ALL, ERROR, FATAL or OFF (default ERROR)
 *   surveyScheduleCron     EventBridge Scheduler cron expression (six fields, UTC, e.g. "0 6 ? * MON *")
 *                          of the bulk survey schedule over surveys/schedule.json (default: no schedule;
 *                          read by the stack itself)
 *   surveyConcurrency      surveys of one bulk run at once (default 2)
 *   seekReservedConcurrency reserved concurrency of the Seek function: seeking agents of all runs at
 *                          once (default 100; 0 = no reservation, for accounts with a small quota)
 *   quotaRequestsPerMinute the seeking model's Bedrock quota of requests per minute (Service Quotas
 *                          console → Amazon Bedrock → "On-demand InvokeModel requests per minute for
 *                          <model>"), every run's default: the seeking Map's MaxConcurrency is derived
 *                          from it (shared/quota.ts; default: none stated)
 *   quotaTokensPerMinute   the same for "On-demand InvokeModel tokens per minute for <model>"
 *
 * The stack is environment-agnostic unless the CLI provides an account and region
 * (CDK_DEFAULT_ACCOUNT / CDK_DEFAULT_REGION), so `cdk synth` needs no AWS credentials.
 * Invalid settings (context values of the wrong type, an invalid model spec, an `openai:` spec without
 * an https:// openaiBaseUrl, numbers out of range) stop the synth with exit code 1 and one line each,
 * all of them at once.
 */
import { App } from 'aws-cdk-lib';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { ConfigurationError } from '../shared/errors';
import { buildStack, DEFAULT_MODEL_SPEC } from './extagents-stack';

const app = new App();

/** Every invalid setting, said at once at the end (context values and the stack's own checks). */
const problems: string[] = [];

function stringContext(key: string, fallback: string): string {
  const value: unknown = app.node.tryGetContext(key);
  if (value === undefined) return fallback;
  if (typeof value !== 'string') {
    problems.push(`CDK context "${key}" must be a string, got ${JSON.stringify(value)}`);
    return fallback;
  }
  return value;
}

/** An integer context value (numbers and numeric strings: `-c key=7` passes a string). */
function integerContext(key: string): number | undefined {
  const value: unknown = app.node.tryGetContext(key);
  if (value === undefined) return undefined;
  const parsed = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof parsed !== 'number' || !Number.isInteger(parsed)) {
    problems.push(`CDK context "${key}" must be an integer, got ${JSON.stringify(value)}`);
    return undefined;
  }
  return parsed;
}

function logLevelContext(key: string): sfn.LogLevel | undefined {
  const value: unknown = app.node.tryGetContext(key);
  if (value === undefined) return undefined;
  const levels = Object.values(sfn.LogLevel) as string[];
  if (typeof value !== 'string' || !levels.includes(value)) {
    problems.push(`CDK context "${key}" must be one of ${levels.join(', ')}, got ${JSON.stringify(value)}`);
    return undefined;
  }
  return value as sfn.LogLevel;
}

const account = process.env.CDK_DEFAULT_ACCOUNT;
const region = process.env.CDK_DEFAULT_REGION;
const options = {
  id: stringContext('stackName', 'ExtAgents'),
  modelSpec: stringContext('model', DEFAULT_MODEL_SPEC),
  retentionDays: integerContext('retentionDays'),
  ingestChunkTokens: integerContext('ingestChunkTokens'),
  jobConcurrency: integerContext('jobConcurrency'),
  surveyConcurrency: integerContext('surveyConcurrency'),
  seekReservedConcurrency: integerContext('seekReservedConcurrency'),
  seekQuota: { requestsPerMinute: integerContext('quotaRequestsPerMinute'), tokensPerMinute: integerContext('quotaTokensPerMinute') },
  alarmEmail: app.node.tryGetContext('alarmEmail') === undefined ? undefined : stringContext('alarmEmail', ''),
  stateMachineLogLevel: logLevelContext('stateMachineLogLevel'),
  ...(account && region && { env: { account, region } }),
};
try {
  buildStack(app, options);
} catch (error) {
  if (!(error instanceof ConfigurationError)) throw error;
  // The stack's own list ("N invalid settings:" then "- …" lines), or its one line.
  problems.push(
    ...error.message
      .split('\n')
      .filter((line) => !/^\d+ invalid settings:$/.test(line))
      .map((line) => line.replace(/^- /, '')),
  );
}
if (problems.length > 0) {
  console.error(
    problems.length === 1 ? `extagents: ${problems[0]}` : `extagents: ${problems.length} invalid settings:\n${problems.map((p) => `- ${p}`).join('\n')}`,
  );
  process.exit(1);
}
