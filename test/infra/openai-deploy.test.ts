/**
 * CDK assertion tests of a deployed `openai:` model spec: CDK context `openaiBaseUrl` (required,
 * https://) and `openaiApiKeySecretName` (optional) become OPENAI_BASE_URL / OPENAI_API_KEY_SECRET of
 * the functions, the model-calling functions may read that one secret, and nothing may invoke Bedrock.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { ConfigurationError } from '../../shared/errors';
import { buildStack, SYNTHESIS_APP_PROPS, type ExtAgentsStack } from '../../infra/extagents-stack';

const ACCOUNT = '123456789012';
const REGION = 'us-west-2';
const MODEL_SPEC = 'openai:llama3.1-8b,llama3.3-70b';
const BASE_URL = 'https://llm.example.com/v1';
const SECRET_NAME = 'extagents/openai-api-key';

/** Synthesize the stack with `-c model=… -c key=value …` as the CLI would pass them. */
function synth(context: Record<string, string>): { stack: ExtAgentsStack; template: Template } {
  const app = new App({ ...SYNTHESIS_APP_PROPS, context: { ...SYNTHESIS_APP_PROPS.context, ...context } });
  const stack = buildStack(app, { modelSpec: MODEL_SPEC, env: { account: ACCOUNT, region: REGION } });
  return { stack, template: Template.fromStack(stack) };
}

/** The rendered environment variables of one function. */
function environmentOf(stack: ExtAgentsStack, template: Template, fn: lambda.Function): Record<string, unknown> {
  const id = stack.getLogicalId(fn.node.defaultChild as lambda.CfnFunction);
  const resource = template.toJSON().Resources[id] as { Properties: { Environment?: { Variables?: Record<string, unknown> } } };
  return resource.Properties.Environment?.Variables ?? {};
}

/** One rendered IAM policy statement with the roles its policy is attached to. */
interface StatementOnRoles {
  roles: string[];
  Action: string | string[];
  Resource: unknown;
}

/** Every Allow statement of every IAM policy of the template, with the logical ids of its roles. */
function statements(template: Template): StatementOnRoles[] {
  const policies = template.findResources('AWS::IAM::Policy') as Record<
    string,
    { Properties: { Roles: Array<{ Ref: string }>; PolicyDocument: { Statement: Array<{ Action: string | string[]; Resource: unknown }> } } }
  >;
  return Object.values(policies).flatMap((policy) =>
    policy.Properties.PolicyDocument.Statement.map((statement) => ({ roles: policy.Properties.Roles.map((role) => role.Ref), ...statement })),
  );
}

function actionsOf(statement: StatementOnRoles): string[] {
  return [statement.Action].flat();
}

function roleIdOf(stack: ExtAgentsStack, fn: lambda.Function): string {
  return stack.getLogicalId(fn.role?.node.defaultChild as iam.CfnRole);
}

describe('a deployed openai: model spec', () => {
  jest.setTimeout(60_000);

  it('gives every function the base URL and only the model-calling ones the key secret name', () => {
    // Act
    const { stack, template } = synth({ openaiBaseUrl: BASE_URL, openaiApiKeySecretName: SECRET_NAME });
    // Assert
    const modelCalling = [stack.functions.seek, stack.functions.reason, stack.surveys.stepsFunction];
    for (const fn of modelCalling) {
      expect(environmentOf(stack, template, fn)).toEqual(
        expect.objectContaining({ MODEL_SPEC, OPENAI_BASE_URL: BASE_URL, OPENAI_API_KEY_SECRET: SECRET_NAME }),
      );
    }
    for (const fn of [stack.functions.prepare, stack.functions.synchronize, stack.functions.finalize, stack.surveys.prepareFunction]) {
      const environment = environmentOf(stack, template, fn);
      expect(environment).toEqual(expect.objectContaining({ OPENAI_BASE_URL: BASE_URL }));
      expect(environment).not.toHaveProperty('OPENAI_API_KEY_SECRET');
    }
  });

  it('lets exactly the model-calling functions read that one secret', () => {
    // Act
    const { stack, template } = synth({ openaiBaseUrl: BASE_URL, openaiApiKeySecretName: SECRET_NAME });
    // Assert
    const secretStatements = statements(template).filter((s) => actionsOf(s).some((a) => a.startsWith('secretsmanager:')));
    expect(secretStatements.flatMap((s) => s.roles).sort()).toEqual(
      [stack.functions.seek, stack.functions.reason, stack.surveys.stepsFunction].map((fn) => roleIdOf(stack, fn)).sort(),
    );
    for (const statement of secretStatements) {
      expect(actionsOf(statement)).toContain('secretsmanager:GetSecretValue');
      expect(actionsOf(statement).every((a) => a === 'secretsmanager:GetSecretValue' || a === 'secretsmanager:DescribeSecret')).toBe(true);
      // The secret's own ARN (Secrets Manager appends a random six-character suffix to the name).
      expect(statement.Resource).toEqual({
        'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:secretsmanager:${REGION}:${ACCOUNT}:secret:${SECRET_NAME}-??????`]],
      });
    }
  });

  it('grants no Bedrock access', () => {
    // Act
    const { template } = synth({ openaiBaseUrl: BASE_URL, openaiApiKeySecretName: SECRET_NAME });
    // Assert
    expect(
      statements(template)
        .flatMap(actionsOf)
        .filter((a) => a.startsWith('bedrock:')),
    ).toEqual([]);
  });

  it('works without a key secret: no secret variable and no Secrets Manager access', () => {
    // Act
    const { stack, template } = synth({ openaiBaseUrl: BASE_URL });
    // Assert
    expect(environmentOf(stack, template, stack.functions.seek)).toEqual(expect.objectContaining({ OPENAI_BASE_URL: BASE_URL }));
    expect(environmentOf(stack, template, stack.functions.seek)).not.toHaveProperty('OPENAI_API_KEY_SECRET');
    expect(
      statements(template)
        .flatMap(actionsOf)
        .filter((a) => a.startsWith('secretsmanager:')),
    ).toEqual([]);
  });

  it('refuses a missing base URL at synth', () => {
    expect(() => synth({ openaiApiKeySecretName: SECRET_NAME })).toThrow(ConfigurationError);
    expect(() => synth({ openaiApiKeySecretName: SECRET_NAME })).toThrow(/needs the OpenAI-compatible server's API root: .*-c openaiBaseUrl=https:\/\//);
  });

  it('refuses a base URL that is not https at synth, and explains why', () => {
    expect(() => synth({ openaiBaseUrl: 'http://10.0.0.5:8000/v1' })).toThrow(ConfigurationError);
    expect(() => synth({ openaiBaseUrl: 'http://10.0.0.5:8000/v1' })).toThrow(/openaiBaseUrl must be an https:\/\/ URL .*API key/);
    expect(() => synth({ openaiBaseUrl: 'llm.example.com/v1' })).toThrow(/openaiBaseUrl must be an https:\/\/ URL/);
  });

  it('refuses a secret ARN where the secret name is expected', () => {
    const arn = `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:${SECRET_NAME}-AbCdEf`;
    expect(() => synth({ openaiBaseUrl: BASE_URL, openaiApiKeySecretName: arn })).toThrow(/openaiApiKeySecretName must be the secret's name/);
  });

  it('takes the settings from stack properties as well as from context', () => {
    // Act
    const app = new App({ ...SYNTHESIS_APP_PROPS });
    const stack = buildStack(app, { modelSpec: MODEL_SPEC, openaiBaseUrl: BASE_URL, openaiApiKeySecretName: SECRET_NAME });
    // Assert
    expect(environmentOf(stack, Template.fromStack(stack), stack.functions.reason)).toEqual(
      expect.objectContaining({ OPENAI_BASE_URL: BASE_URL, OPENAI_API_KEY_SECRET: SECRET_NAME }),
    );
  });
});

describe('llama: specs are not deployable', () => {
  it('synth stops with a ConfigurationError saying llama: runs only locally', () => {
    const app = new App(SYNTHESIS_APP_PROPS);
    expect(() => buildStack(app, { modelSpec: 'llama:/models/smollm2.gguf' })).toThrow(ConfigurationError);
    expect(() => buildStack(new App(SYNTHESIS_APP_PROPS), { modelSpec: 'llama:/models/smollm2.gguf' })).toThrow(/run in-process on the local machine only/);
  });
});
