/**
 * `extagents doctor`: what a deploy needs, checked before the deploy, each problem with the command
 * that fixes it (issue 13, item 6):
 * 1. an AWS region (the SDK's default chain: AWS_REGION, the profile);
 * 2. credentials that work (STS GetCallerIdentity: the account and the caller);
 * 3. the CDK bootstrap of that account and region (the SSM parameter `/cdk-bootstrap/hnb659fds/version`
 *    that `cdk deploy` itself reads; version 6 or later, what the synthesized template requires);
 * 4. Amazon Bedrock access to each model id of the spec (Bedrock control plane): the model exists in
 *    the region, the account is authorized and entitled (GetFoundationModelAvailability), and the
 *    inference-profile rule — a model Bedrock serves only through a cross-region inference profile
 *    is given by its profile id (`us.<model id>`), and a profile id names a profile that exists.
 * `openai:` and `llama:` specs call no AWS model service; `extractive` needs none.
 * Sources: https://docs.aws.amazon.com/cdk/v2/guide/bootstrapping-env.html,
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_GetFoundationModelAvailability.html,
 * https://docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-support.html
 */
import { BedrockClient, GetFoundationModelAvailabilityCommand, GetFoundationModelCommand, GetInferenceProfileCommand } from '@aws-sdk/client-bedrock';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { modelTraits } from '../../models/traits';
import { foundationModelIdOf, isInferenceProfileId } from '../../models/bedrock/traits';
import type { ModelSpec } from '../../shared/model-spec';

/** The CDK bootstrap version parameter of the default qualifier (what `cdk deploy` checks). */
export const BOOTSTRAP_VERSION_PARAMETER = '/cdk-bootstrap/hnb659fds/version';
/** The oldest bootstrap version the synthesized template accepts (its CheckBootstrapVersion rule). */
export const MIN_BOOTSTRAP_VERSION = 6;

/** One check's outcome. */
export interface DoctorCheck {
  name: string;
  status: 'ok' | 'fail' | 'skipped';
  detail: string;
  /** The command (or step) that fixes a failure. */
  fix?: string;
}

/** The AWS clients the checks use (tests pass clients mocked with aws-sdk-client-mock). */
export interface DoctorClients {
  sts: STSClient;
  ssm: SSMClient;
  bedrock: BedrockClient;
}

/** Clients from the SDK's default chains (region, credentials); nothing is sent until a check runs. */
export function defaultDoctorClients(): DoctorClients {
  return { sts: new STSClient({}), ssm: new SSMClient({}), bedrock: new BedrockClient({}) };
}

/** A failure to reach the service at all (DNS, refused or timed-out connection), not a refusal by it. */
function isNetworkError(error: unknown): boolean {
  const text = `${(error as { code?: string }).code ?? ''} ${error instanceof Error ? `${error.name} ${error.message}` : String(error)}`;
  return /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|getaddrinfo|TimeoutError/.test(text);
}

const message = (error: unknown): string => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

/**
 * Run every check, in order; a check that needs what a failed one gives (credentials, a region) is
 * skipped with the reason.
 * @param spec the model spec the stack will deploy (CDK context `model`).
 */
export async function runDoctor(spec: ModelSpec, clients: DoctorClients = defaultDoctorClients()): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  let region: string | undefined;
  try {
    region = await clients.sts.config.region();
  } catch {
    region = undefined;
  }
  checks.push(
    region
      ? { name: 'region', status: 'ok', detail: region }
      : {
          name: 'region',
          status: 'fail',
          detail: "no AWS region found (AWS_REGION, or the profile's region)",
          fix: 'export AWS_REGION=us-east-1   (or: aws configure set region us-east-1)',
        },
  );

  let account: string | undefined;
  if (!region) {
    checks.push({ name: 'credentials', status: 'skipped', detail: 'needs a region' });
  } else {
    try {
      const identity = await clients.sts.send(new GetCallerIdentityCommand({}));
      account = identity.Account;
      checks.push({ name: 'credentials', status: 'ok', detail: `account ${identity.Account}, ${identity.Arn}` });
    } catch (error) {
      checks.push(
        isNetworkError(error)
          ? {
              name: 'credentials',
              status: 'fail',
              detail: `cannot reach AWS STS to check the credentials (${message(error)})`,
              fix: 'check the network, a proxy (HTTPS_PROXY) or a VPC endpoint, then run doctor again',
            }
          : {
              name: 'credentials',
              status: 'fail',
              detail: `no working AWS credentials (${message(error)})`,
              fix: 'aws configure   (or: aws sso login --profile <profile>, then export AWS_PROFILE=<profile>)',
            },
      );
    }
  }

  if (!account || !region) {
    checks.push({ name: 'cdk bootstrap', status: 'skipped', detail: 'needs credentials and a region' });
  } else {
    const bootstrap = `npx cdk bootstrap aws://${account}/${region}`;
    try {
      const out = await clients.ssm.send(new GetParameterCommand({ Name: BOOTSTRAP_VERSION_PARAMETER }));
      const version = Number(out.Parameter?.Value);
      checks.push(
        Number.isFinite(version) && version >= MIN_BOOTSTRAP_VERSION
          ? { name: 'cdk bootstrap', status: 'ok', detail: `version ${version} in ${account}/${region}` }
          : {
              name: 'cdk bootstrap',
              status: 'fail',
              detail: `version ${out.Parameter?.Value ?? '?'} in ${account}/${region}; the stack needs ${MIN_BOOTSTRAP_VERSION} or later`,
              fix: bootstrap,
            },
      );
    } catch (error) {
      const missing = (error as Error).name === 'ParameterNotFound';
      checks.push({
        name: 'cdk bootstrap',
        status: 'fail',
        detail: missing
          ? `${account}/${region} is not bootstrapped (no ${BOOTSTRAP_VERSION_PARAMETER})`
          : `cannot read ${BOOTSTRAP_VERSION_PARAMETER} (${message(error)})`,
        fix: bootstrap,
      });
    }
  }

  const traits = modelTraits(spec);
  if (traits.cloudRefusal !== undefined) {
    // The stack refuses this spec at synth: say so here, before a deploy finds it.
    checks.push({ name: 'model', status: 'fail', detail: traits.cloudRefusal, fix: 'deploy with --model bedrock:<seekerId>[,<reasonerId>] or openai:<model>' });
    return checks;
  }
  if (!traits.invokedModels) {
    checks.push({ name: 'model', status: 'skipped', detail: traits.service });
    return checks;
  }
  for (const id of new Set([traits.invokedModels.seeker, traits.invokedModels.reasoner])) {
    if (!account || !region) {
      checks.push({ name: `bedrock ${id}`, status: 'skipped', detail: 'needs credentials and a region' });
      continue;
    }
    checks.push(await checkBedrockModel(clients.bedrock, id, region));
  }
  return checks;
}

/** One Bedrock model id: exists in the region, the account may invoke it, and the inference-profile rule holds. */
async function checkBedrockModel(bedrock: BedrockClient, id: string, region: string): Promise<DoctorCheck> {
  const name = `bedrock ${id}`;
  const base = foundationModelIdOf(id);
  const access = `open the Amazon Bedrock console in ${region}, "Model access", and request access to ${base}`;
  if (isInferenceProfileId(id)) {
    try {
      await bedrock.send(new GetInferenceProfileCommand({ inferenceProfileIdentifier: id }));
    } catch (error) {
      return {
        name,
        status: 'fail',
        detail: `no inference profile ${id} in ${region} (${message(error)})`,
        fix: `aws bedrock list-inference-profiles --region ${region}   (and use one of its ids in the CDK context model)`,
      };
    }
  } else {
    try {
      const model = await bedrock.send(new GetFoundationModelCommand({ modelIdentifier: id }));
      // Bedrock lists INFERENCE_PROFILE (beyond the SDK's enum) for a model served only through profiles.
      const types: string[] = model.modelDetails?.inferenceTypesSupported ?? [];
      if (!types.includes('ON_DEMAND') && types.includes('INFERENCE_PROFILE')) {
        return {
          name,
          status: 'fail',
          detail: `${id} is served only through a cross-region inference profile in ${region}`,
          fix: `use the profile id, e.g. -c model=bedrock:us.${id}`,
        };
      }
      if (!types.includes('ON_DEMAND')) {
        return {
          name,
          status: 'fail',
          detail: `${id} is not served on demand in ${region} (inference types: ${types.join(', ') || 'none'})`,
          fix: `aws bedrock list-foundation-models --region ${region} --by-inference-type ON_DEMAND   (choose one of those)`,
        };
      }
    } catch (error) {
      return {
        name,
        status: 'fail',
        detail: `no foundation model ${id} in ${region} (${message(error)})`,
        fix: `aws bedrock list-foundation-models --region ${region}   (or choose a region that serves it)`,
      };
    }
  }
  try {
    const availability = await bedrock.send(new GetFoundationModelAvailabilityCommand({ modelId: base }));
    const problems = [
      availability.authorizationStatus !== 'AUTHORIZED' && `authorization ${availability.authorizationStatus ?? 'unknown'}`,
      availability.entitlementAvailability !== 'AVAILABLE' && `entitlement ${availability.entitlementAvailability ?? 'unknown'}`,
      availability.regionAvailability !== 'AVAILABLE' && `region ${availability.regionAvailability ?? 'unknown'}`,
    ].filter((p): p is string => typeof p === 'string');
    if (problems.length > 0) return { name, status: 'fail', detail: `${base}: ${problems.join(', ')}`, fix: access };
    return { name, status: 'ok', detail: isInferenceProfileId(id) ? `profile of ${base}, access granted` : 'access granted' };
  } catch (error) {
    return { name, status: 'fail', detail: `cannot read the access of ${base} (${message(error)})`, fix: access };
  }
}
