/**
 * The run option defaults of a small-context model (models/context.ts): the synchronization budget
 * follows the chunk size a run reads, so a model profile's 500-token chunk does not get the 12% of
 * the context a 40% chunk gets (issue 38: round >= 2 re-reads known evidence beside each chunk).
 */
import { contextFittedRunOptionDefaults, fitRunRequest, syncBudgetForChunk } from '../../models/context';
import { runOptionDefaultsForContext } from '../../shared/config';
import { parseRunRequest } from '../../shared/run-request';

describe('syncBudgetForChunk', () => {
  it("keeps the context's share beside a chunk of 40% of the context, and scales it with a smaller chunk", () => {
    const base = runOptionDefaultsForContext(8192);
    expect(syncBudgetForChunk(8192, base.chunkTokens)).toBe(base.syncBudgetTokens);
    expect(syncBudgetForChunk(8192, 500)).toBe(150);
    expect(syncBudgetForChunk(4096, 500)).toBe(150);
    expect(syncBudgetForChunk(4096, 1000)).toBe(300);
  });

  it("never gives more than the context's share, whatever the chunk", () => {
    expect(syncBudgetForChunk(4096, 3000)).toBe(runOptionDefaultsForContext(4096).syncBudgetTokens);
    expect(syncBudgetForChunk(1_000_000, 8000)).toBe(4000);
  });
});

describe('contextFittedRunOptionDefaults', () => {
  it("leaves a context's own defaults as they were", () => {
    expect(contextFittedRunOptionDefaults(8192)).toEqual({ chunkTokens: 3276, syncBudgetTokens: 983, reasonerBudgetTokens: 4505 });
  });

  it("gives a profile's 500-token chunk a synchronization budget of 0.3 of it, at any context", () => {
    for (const context of [4096, 8192]) {
      const fitted = contextFittedRunOptionDefaults(context, { chunkTokens: 500 });
      expect(fitted).toMatchObject({ chunkTokens: 500, syncBudgetTokens: 150 });
      expect(fitted.reasonerBudgetTokens).toBe(runOptionDefaultsForContext(context).reasonerBudgetTokens);
    }
  });
});

describe('fitRunRequest', () => {
  const fit = (options: Record<string, unknown>) => fitRunRequest(parseRunRequest({ question: 'Who?', options }), 4096, { chunkTokens: 500 }).fitted?.options;

  it("takes the model's defaults for a request that sets neither", () => {
    expect(fit({})).toMatchObject({ chunkTokens: 500, syncBudgetTokens: 150 });
  });

  it('lets the synchronization budget follow a chunk size the request gives', () => {
    expect(fit({ chunkTokens: 1000 })).toMatchObject({ chunkTokens: 1000, syncBudgetTokens: 300 });
  });

  it('keeps a synchronization budget the request gives, with or without a chunk size', () => {
    expect(fit({ chunkTokens: 1000, syncBudgetTokens: 50 })).toMatchObject({ chunkTokens: 1000, syncBudgetTokens: 50 });
    expect(fit({ syncBudgetTokens: 400 })).toMatchObject({ chunkTokens: 500, syncBudgetTokens: 400 });
  });
});
