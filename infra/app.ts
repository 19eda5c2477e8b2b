/**
 * CDK app entry (`cdk.json`: `npx tsx infra/app.ts`).
 *
 * Context (`cdk synth -c key=value` or cdk.json):
 *   model      model spec, e.g. `extractive` or `bedrock:<seekerModelId>,<reasonerModelId>`
 *              (default: DEFAULT_MODEL_SPEC, Llama 3.1 8B seekers and Llama 3.3 70B reasoner
 *              through US cross-region inference profiles)
 *   stackName  construct id and CloudFormation stack name (default `ExtAgents`)
 *
 * The stack is environment-agnostic unless the CLI provides an account and region
 * (CDK_DEFAULT_ACCOUNT / CDK_DEFAULT_REGION), so `cdk synth` needs no AWS credentials.
 * An invalid model spec stops the synth with a one-line message and exit code 1.
 */
import { App } from 'aws-cdk-lib';
import { ConfigurationError } from '../shared/errors';
import { buildStack, DEFAULT_MODEL_SPEC } from './extagents-stack';

const app = new App();

function stringContext(key: string, fallback: string): string {
  const value: unknown = app.node.tryGetContext(key);
  if (value === undefined) return fallback;
  if (typeof value !== 'string') {
    throw new ConfigurationError(`CDK context "${key}" must be a string, got ${JSON.stringify(value)}`);
  }
  return value;
}

try {
  const account = process.env.CDK_DEFAULT_ACCOUNT;
  const region = process.env.CDK_DEFAULT_REGION;
  buildStack(app, {
    id: stringContext('stackName', 'ExtAgents'),
    modelSpec: stringContext('model', DEFAULT_MODEL_SPEC),
    ...(account && region && { env: { account, region } }),
  });
} catch (error) {
  if (error instanceof ConfigurationError) {
    console.error(`extagents: ${error.message}`);
    process.exit(1);
  }
  throw error;
}
