/**
 * The CDK app's settings (infra/app.ts): every invalid one is said at once, one line each, with exit
 * status 1 and before anything is synthesized.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

describe('the CDK app with invalid settings', () => {
  jest.setTimeout(60_000);

  it("lists a wrong-typed context value and the stack's own problems together, exit 1, no template", () => {
    const outdir = mkdtempSync(path.join(tmpdir(), 'extagents-app-'));
    try {
      const run = spawnSync(process.execPath, ['-r', 'tsx/cjs', path.join(ROOT, 'infra', 'app.ts')], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, CDK_OUTDIR: outdir, CDK_CONTEXT_JSON: JSON.stringify({ retentionDays: '0', jobConcurrency: 'x', surveyConcurrency: '500' }) },
      });

      expect(run.status).toBe(1);
      expect(run.stderr.trim().split('\n')).toEqual([
        'extagents: 3 invalid settings:',
        '- CDK context "jobConcurrency" must be an integer, got "x"',
        '- retentionDays must be a positive integer, got 0',
        '- surveyConcurrency must be an integer from 1 to 100, got 500',
      ]);
      expect(readdirSync(outdir).filter((f) => f.endsWith('.template.json'))).toEqual([]);
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });
});
