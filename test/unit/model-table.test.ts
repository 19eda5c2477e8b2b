/**
 * The provider table (models/index.ts) and the traits table (models/traits.ts): every model kind
 * has a provider of that kind, traits, a price lookup and its conformance suite
 * (test/support/model-conformance.ts, run by test/unit/providers/<kind>.test.ts with the provider's
 * own stand-in).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { loadModels, modelPricing, providerOf, recordModelIds, type ModelKind } from '../../models';
import { modelTraits } from '../../models/traits';
import { ConfigurationError } from '../../shared/errors';

/** Every model kind, once: `satisfies` with the exhaustive check below makes a new kind fail to compile here until it is listed. */
const KINDS = ['extractive', 'bedrock', 'openai', 'llama'] as const satisfies readonly ModelKind[];
type Missing = Exclude<ModelKind, (typeof KINDS)[number]>;
const allListed: Missing extends never ? true : false = true;

describe('the table', () => {
  it('lists every model kind, each with the provider of that kind and a price lookup for both roles', () => {
    expect(allListed).toBe(true);
    const specs: Record<ModelKind, string> = {
      extractive: 'extractive',
      bedrock: 'bedrock:meta.llama3-1-8b-instruct-v1:0',
      openai: 'openai:m',
      llama: 'llama:m.gguf',
    };
    for (const kind of KINDS) {
      expect(providerOf(specs[kind]).provider.kind).toBe(kind);
      const pricing = modelPricing(specs[kind]);
      expect(Object.keys(pricing.models).sort()).toEqual(['reasoner', 'seeker']);
      expect(Object.keys(recordModelIds(specs[kind])).sort()).toEqual(['reasoner', 'seeker']);
    }
  });

  it('has traits for every kind (what the CDK app, doctor and the page read without loading a provider), and none for an unknown kind', () => {
    const bedrock = modelTraits('bedrock:us.meta.llama3-1-8b-instruct-v1:0,us.meta.llama3-3-70b-instruct-v1:0');
    expect(bedrock).toMatchObject({
      languageModel: true,
      invokedModels: { seeker: 'us.meta.llama3-1-8b-instruct-v1:0', reasoner: 'us.meta.llama3-3-70b-instruct-v1:0' },
    });
    expect(bedrock.cloudRefusal).toBeUndefined();
    expect(bedrock.externalServer).toBeFalsy();
    expect(modelTraits('extractive')).toMatchObject({ languageModel: false });
    expect(modelTraits('extractive').externalServer).toBeFalsy();
    expect(modelTraits('openai:m')).toMatchObject({
      languageModel: true,
      externalServer: {
        baseUrl: { context: 'openaiBaseUrl', env: 'OPENAI_BASE_URL' },
        apiKeySecret: { context: 'openaiApiKeySecretName', env: 'OPENAI_API_KEY_SECRET' },
      },
    });
    expect(modelTraits('openai:m').invokedModels).toBeUndefined();
    expect(modelTraits('llama:m.gguf').cloudRefusal).toMatch(/local machine only/);
    for (const kind of KINDS) expect(modelTraits({ kind, seekerModelId: 'a', reasonerModelId: 'a' } as never).service).not.toBe('');
    expect(() => modelTraits({ kind: 'azure' } as never)).toThrow(ConfigurationError);
  });

  it('has no chat model for the extractive reader, and no silent default for a kind it does not know', async () => {
    expect((await loadModels('extractive')).chat('seeker')).toBeUndefined();
    expect(() => providerOf({ kind: 'azure' } as never)).toThrow(ConfigurationError);
  });
});

describe('the conformance suite', () => {
  it.each(KINDS)('runs for %s: its test file calls the suite with its own harness', (kind) => {
    const file = path.join(__dirname, 'providers', `${kind}.test.ts`);
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(file, 'utf8')).toMatch(/describe(ChatModel|Agent)Conformance\(/);
  });
});
