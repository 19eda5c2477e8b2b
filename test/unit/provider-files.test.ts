/**
 * scripts/provider-files.ts: what counts as a file naming a provider (the count docs/ARCHITECTURE.md
 * reports). Code only: an import of the provider's folder, the kind as a string or spec, an
 * identifier containing its name; never a comment.
 */
import { reasonsIn } from '../../scripts/provider-files';

describe('provider-files reasonsIn', () => {
  it('counts an import of the folder (static, type-only, require and import type) from wherever the file is', () => {
    expect([...reasonsIn('lambdas/adapters/x.ts', "import { a } from '../../models/openai/openai';", 'openai')]).toEqual(['import']);
    expect([...reasonsIn('models/index.ts', "const p = () => require('./openai');", 'openai')]).toEqual(['import']);
    expect([...reasonsIn('local/x.ts', "type T = import('../models/openai/options').OpenAiDeps;", 'openai')]).toContain('import');
    expect([...reasonsIn('local/cli/x.ts', "export type { X } from '../../models/openai';", 'openai')]).toEqual(['import']);
  });

  it('counts the kind as a string or a spec, and identifiers that contain its name in any case', () => {
    expect([...reasonsIn('infra/x.ts', "if (spec.kind === 'bedrock') grant();", 'bedrock')]).toEqual(['kind']);
    expect([...reasonsIn('infra/x.ts', 'const spec = `bedrock:${id}`;', 'bedrock')]).toEqual(['kind']);
    expect([...reasonsIn('infra/x.ts', 'const m: BedrockDeps = {};', 'bedrock')]).toEqual(['name']);
    expect([...reasonsIn('infra/x.ts', 'const s = deps.openAiOptions;', 'openai')]).toEqual(['name']);
  });

  it('does not count comments, other folders, nor a string that only contains the kind', () => {
    const text = [
      "// openai: see models/openai/openai.ts; require('../models/openai')",
      '/** The bedrock client. */',
      "import { x } from '../models/openaiish';",
      "const help = 'use an openai-compatible server';",
    ].join('\n');
    expect(reasonsIn('local/x.ts', text, 'openai').size).toBe(0);
    expect(reasonsIn('local/x.ts', text, 'bedrock').size).toBe(0);
  });
});
