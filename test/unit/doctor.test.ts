/**
 * `extagents doctor` (local/services/doctor.ts) against mocked AWS clients (aws-sdk-client-mock; no
 * network): each problem is found and named with the command that fixes it, and checks that need a
 * failed one's result are skipped.
 */
import { BedrockClient, GetFoundationModelAvailabilityCommand, GetFoundationModelCommand, GetInferenceProfileCommand } from '@aws-sdk/client-bedrock';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { BOOTSTRAP_VERSION_PARAMETER, runDoctor, type DoctorClients } from '../../local/services/doctor';
import { parseModelSpec } from '../../models/spec';

const sts = mockClient(STSClient);
const ssm = mockClient(SSMClient);
const bedrock = mockClient(BedrockClient);

function clients(region: string | undefined = 'us-east-1'): DoctorClients {
  const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' };
  return {
    sts: new STSClient({
      region:
        region ??
        (async () => {
          throw new Error('Region is missing');
        }),
      credentials,
    }),
    ssm: new SSMClient({ region: region ?? 'x', credentials }),
    bedrock: new BedrockClient({ region: region ?? 'x', credentials }),
  };
}

const named = (error: string) => Object.assign(new Error(`${error} (mocked)`), { name: error });
const SPEC = parseModelSpec('bedrock:us.meta.llama3-1-8b-instruct-v1:0,meta.llama3-3-70b-instruct-v1:0');

beforeEach(() => {
  sts.reset();
  ssm.reset();
  bedrock.reset();
  sts.on(GetCallerIdentityCommand).resolves({ Account: '123456789012', Arn: 'arn:aws:iam::123456789012:user/alice' });
  ssm.on(GetParameterCommand, { Name: BOOTSTRAP_VERSION_PARAMETER }).resolves({ Parameter: { Value: '27' } });
  bedrock.on(GetInferenceProfileCommand).resolves({ inferenceProfileId: 'us.meta.llama3-1-8b-instruct-v1:0' });
  bedrock
    .on(GetFoundationModelCommand)
    .resolves({ modelDetails: { modelArn: 'arn', modelId: 'meta.llama3-3-70b-instruct-v1:0', inferenceTypesSupported: ['ON_DEMAND'] } });
  bedrock.on(GetFoundationModelAvailabilityCommand).resolves({
    authorizationStatus: 'AUTHORIZED',
    entitlementAvailability: 'AVAILABLE',
    regionAvailability: 'AVAILABLE',
    agreementAvailability: { status: 'AVAILABLE' },
  });
});

describe('runDoctor', () => {
  it('passes a ready account: region, identity, bootstrap, and access to each model', async () => {
    const checks = await runDoctor(SPEC, clients());

    expect(checks.map((c) => [c.name, c.status])).toEqual([
      ['region', 'ok'],
      ['credentials', 'ok'],
      ['cdk bootstrap', 'ok'],
      ['bedrock us.meta.llama3-1-8b-instruct-v1:0', 'ok'],
      ['bedrock meta.llama3-3-70b-instruct-v1:0', 'ok'],
    ]);
    expect(
      bedrock
        .commandCalls(GetFoundationModelAvailabilityCommand)
        .map((c) => c.args[0].input.modelId)
        .sort(),
    ).toEqual(['meta.llama3-1-8b-instruct-v1:0', 'meta.llama3-3-70b-instruct-v1:0']);
  });

  it('names a missing bootstrap and model access, each with the command that fixes it', async () => {
    ssm.on(GetParameterCommand).rejects(named('ParameterNotFound'));
    bedrock
      .on(GetFoundationModelAvailabilityCommand)
      .resolves({ authorizationStatus: 'NOT_AUTHORIZED', entitlementAvailability: 'AVAILABLE', regionAvailability: 'AVAILABLE' });

    const checks = await runDoctor(SPEC, clients());

    expect(checks.find((c) => c.name === 'cdk bootstrap')).toMatchObject({ status: 'fail', fix: 'npx cdk bootstrap aws://123456789012/us-east-1' });
    expect(checks.find((c) => c.name === 'bedrock meta.llama3-3-70b-instruct-v1:0')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('authorization NOT_AUTHORIZED'),
      fix: expect.stringContaining('Model access'),
    });
  });

  it('applies the inference-profile rule: a profile-only model given by its base id, and a profile that does not exist', async () => {
    bedrock.on(GetFoundationModelCommand).resolves({
      modelDetails: { modelArn: 'arn', modelId: 'meta.llama3-3-70b-instruct-v1:0', inferenceTypesSupported: ['INFERENCE_PROFILE' as 'ON_DEMAND'] },
    });
    bedrock.on(GetInferenceProfileCommand).rejects(named('ResourceNotFoundException'));

    const checks = await runDoctor(SPEC, clients());

    expect(checks.find((c) => c.name === 'bedrock meta.llama3-3-70b-instruct-v1:0')).toMatchObject({
      status: 'fail',
      fix: 'use the profile id, e.g. -c model=bedrock:us.meta.llama3-3-70b-instruct-v1:0',
    });
    expect(checks.find((c) => c.name === 'bedrock us.meta.llama3-1-8b-instruct-v1:0')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('no inference profile'),
    });
  });

  it('says how to set credentials, and skips what needs them', async () => {
    sts.on(GetCallerIdentityCommand).rejects(named('InvalidClientTokenId'));

    const checks = await runDoctor(SPEC, clients());

    expect(checks.find((c) => c.name === 'credentials')).toMatchObject({ status: 'fail', fix: expect.stringContaining('aws configure') });
    expect(checks.filter((c) => c.status === 'skipped').map((c) => c.name)).toEqual([
      'cdk bootstrap',
      'bedrock us.meta.llama3-1-8b-instruct-v1:0',
      'bedrock meta.llama3-3-70b-instruct-v1:0',
    ]);
    expect(bedrock.calls()).toHaveLength(0);
  });

  it('tells a network failure from bad credentials', async () => {
    sts
      .on(GetCallerIdentityCommand)
      .rejects(Object.assign(new Error('getaddrinfo ENOTFOUND sts.us-east-1.amazonaws.com'), { name: 'Error', code: 'ENOTFOUND' }));

    const checks = await runDoctor(SPEC, clients());

    expect(checks.find((c) => c.name === 'credentials')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('cannot reach AWS STS'),
      fix: expect.stringContaining('network'),
    });
  });

  it('checks no model service for the extractive reader or an openai: model', async () => {
    for (const [spec, detail] of [
      ['extractive', /offline extractive reader/],
      ['openai:gpt-4o-mini', /OpenAI-compatible server/],
    ] as const) {
      const checks = await runDoctor(parseModelSpec(spec), clients());
      expect(checks.at(-1)).toMatchObject({ name: 'model', status: 'skipped', detail: expect.stringMatching(detail) });
    }
    expect(bedrock.calls()).toHaveLength(0);
  });

  it('fails the model check of a spec the stack refuses at synth (llama: runs only on this machine)', async () => {
    const checks = await runDoctor(parseModelSpec('llama:/models/m.gguf'), clients());
    expect(checks.at(-1)).toMatchObject({
      name: 'model',
      status: 'fail',
      detail: expect.stringMatching(/local machine only/),
      fix: expect.stringMatching(/bedrock:/),
    });
    expect(bedrock.calls()).toHaveLength(0);
  });
});
