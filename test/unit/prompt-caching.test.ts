/**
 * Prompt caching for many questions over one corpus (issue 13, item 4): for a Bedrock model that
 * caches prompts (Claude, Nova) the seeking agent's first turn is its chunk, a `cachePoint`, then the
 * question; for any other model the request is unchanged. Cache read/write tokens reach the usage,
 * and the estimate counts a caching seeker's chunk tokens as cache writes.
 */
import { BedrockRuntimeClient, ConverseCommand } from '@aws-sdk/client-bedrock-runtime';
import { mockClient } from 'aws-sdk-client-mock';
import { BedrockChatModel } from '../../models/bedrock/bedrock';
import { modelPricing } from '../../models';
import { estimateRun, priceEstimate } from '../../shared/cost';
import { parseRunOptions } from '../../shared/config';
import { LlmAgents } from '../../shared/llm/agents';
import { supportsPromptCaching } from '../../models/bedrock/traits';
import type { Chunk } from '../../shared/types';

const bedrockMock = mockClient(BedrockRuntimeClient);
const CHUNK_TEXT = 'The keeper of the Bell Rock lighthouse was Robert Stevenson.';
const chunk: Chunk = {
  index: 3,
  text: CHUNK_TEXT,
  tokens: 12,
  chars: CHUNK_TEXT.length,
  segments: [{ documentId: 'a.txt', start: 0, end: CHUNK_TEXT.length, chunkStart: 0 }],
};

function reply(usage: Record<string, number>) {
  const content = [{ text: JSON.stringify({ evidence: 'Robert Stevenson was the keeper.', quotes: [CHUNK_TEXT], score: 90 }) }];
  return {
    output: { message: { role: 'assistant' as const, content } },
    stopReason: 'end_turn' as const,
    usage: { inputTokens: 40, outputTokens: 20, totalTokens: 60, ...usage },
    metrics: { latencyMs: 5 },
    $metadata: {},
  };
}

async function seekWith(modelId: string): Promise<{ content: unknown[]; usage: Record<string, unknown> }> {
  bedrockMock.reset();
  bedrockMock.on(ConverseCommand).resolves(reply({ cacheReadInputTokens: 900, cacheWriteInputTokens: 0 }));
  const model = new BedrockChatModel(new BedrockRuntimeClient({ region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } }), modelId);
  const agents = new LlmAgents({ seeker: model, reasoner: model });
  const result = await agents.seek({ question: 'Who was the keeper?', chunk, round: 1, synchronized: [] });
  const input = bedrockMock.commandCalls(ConverseCommand)[0].args[0].input;
  return { content: input.messages?.[0].content ?? [], usage: result.usage as unknown as Record<string, unknown> };
}

describe('prompt caching of the seeking prompt', () => {
  it('sends a Claude or Nova seeker its chunk, a cache point, then the question, and counts cache reads', async () => {
    const { content, usage } = await seekWith('us.anthropic.claude-3-5-haiku-20241022-v1:0');

    expect(content).toHaveLength(3);
    expect((content[0] as { text: string }).text).toContain(CHUNK_TEXT);
    expect((content[0] as { text: string }).text).not.toContain('Who was the keeper?');
    expect(content[1]).toEqual({ cachePoint: { type: 'default' } });
    expect((content[2] as { text: string }).text).toContain('Who was the keeper?');
    expect(usage).toMatchObject({ calls: 1, inputTokens: 40, cacheReadInputTokens: 900 });
    expect(usage).not.toHaveProperty('cacheWriteInputTokens');
  });

  it('leaves the request of a model without caching as it was: one text block, question first', async () => {
    const { content } = await seekWith('us.meta.llama3-1-8b-instruct-v1:0');

    expect(content).toHaveLength(1);
    const text = (content[0] as { text: string }).text;
    expect(text.indexOf('Who was the keeper?')).toBeLessThan(text.indexOf(CHUNK_TEXT));
  });

  it('knows which models cache prompts', () => {
    expect(['anthropic.claude-3-7-sonnet-20250219-v1:0', 'us.amazon.nova-lite-v1:0'].map(supportsPromptCaching)).toEqual([true, true]);
    expect(['meta.llama3-1-8b-instruct-v1:0', 'us.meta.llama3-3-70b-instruct-v1:0', 'mistral.mistral-large-2402-v1:0'].map(supportsPromptCaching)).toEqual([
      false,
      false,
      false,
    ]);
  });
});

describe('the estimate of a caching seeker', () => {
  const input = { chunks: 10, chunkTokensTotal: 50_000, question: 'Who?', options: parseRunOptions({ rounds: 2 }) };

  it('counts its chunk tokens as cache writes, not as plain input, and prices them at the input price when the table has no cache price', () => {
    const plain = estimateRun(input);
    const cached = estimateRun(input, modelPricing('bedrock:us.amazon.nova-lite-v1:0'));

    expect(cached.seeker.cacheWriteInputTokens).toBe(100_000);
    expect(cached.seeker.inputTokens + (cached.seeker.cacheWriteInputTokens ?? 0)).toBe(plain.seeker.inputTokens);
    expect(modelPricing('bedrock:us.meta.llama3-1-8b-instruct-v1:0').seekerCaches).toBe(false);
    const table = {
      currency: 'USD',
      unit: 'x',
      writtenOn: '2026-12-01',
      warning: 'test',
      models: {
        'amazon.nova-lite-v1:0': { inputUsdPerMTok: 1, outputUsdPerMTok: 1, cacheWriteUsdPerMTok: 2, asOf: '2026-12-01', source: 'test', verified: false },
      },
    };
    const priced = priceEstimate(cached, modelPricing('bedrock:us.amazon.nova-lite-v1:0'), table);
    const seeker = cached.seeker;
    expect(priced.prices.seeker).toMatchObject({ priced: true, usd: (seeker.inputTokens + seeker.outputTokens + 2 * 100_000) / 1e6 });
  });
});
