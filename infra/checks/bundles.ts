/**
 * Smoke test of the Lambda bundles a synthesized cloud assembly deploys: each function's esbuild
 * output (`asset.<hash>/index.js`) is copied alone into a fresh directory and imported by a fresh
 * Node process with only what the Lambda Node.js runtime provides (no node_modules beside it, the
 * function's environment variables, `LAMBDA_TASK_ROOT`, `AWS_REGION`), and the handler export the
 * template names (`Handler: index.<export>`) must be a function.
 * Source: https://docs.aws.amazon.com/lambda/latest/dg/nodejs-handler.html,
 * https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PLACEHOLDER, resolveIntrinsics, type Template } from './policies';

/** One Lambda function of a template and the bundle it deploys. */
export interface LambdaBundle {
  /** Logical id of the AWS::Lambda::Function. */
  functionId: string;
  /** The bundle file (`<assembly>/asset.<hash>/index.js`). */
  file: string;
  /** The export the handler names (`index.planHandler` -> `planHandler`). */
  exportName: string;
  /** The function's environment variables, intrinsics resolved to placeholders (infra/checks/policies.ts). */
  environment: Record<string, string>;
}

/** What importing one bundle showed. */
export interface BundleSmoke {
  functionId: string;
  exportName: string;
  /** Size of index.js, bytes (the source map beside it is not counted). */
  bytes: number;
  /** Whether the bundle holds the o200k_base ranks of gpt-tokenizer (about 2.4 MB of source). */
  tokenizerRanks: boolean;
  /** Milliseconds to `require` the bundle in a fresh process (cold import, this machine). */
  importMs?: number;
  /** Resident set size after the import, bytes. */
  rssBytes?: number;
  /** Why the smoke test failed: the import threw, or the export is not a function. */
  error?: string;
}

/** A token string of the o200k_base ranks found nowhere else in the bundles. */
const TOKENIZER_RANKS_MARKER = 'scalablytyped';

/**
 * The Lambda functions of a template with their bundles in `assemblyDir`.
 * @throws Error when a function's code is not a bundled asset of the assembly (`Code.S3Key` names
 *   `<hash>.zip` and `asset.<hash>/index.js` must exist) or its handler is not `index.<export>`.
 */
export function lambdaBundles(template: Template, assemblyDir: string): LambdaBundle[] {
  const bundles: LambdaBundle[] = [];
  for (const [functionId, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const properties = resource.Properties ?? {};
    const key = (properties.Code as { S3Key?: unknown } | undefined)?.S3Key;
    const hash = typeof key === 'string' ? /^([0-9a-f]{64})\.zip$/.exec(key)?.[1] : undefined;
    const file = hash === undefined ? undefined : path.join(assemblyDir, `asset.${hash}`, 'index.js');
    if (file === undefined || !existsSync(file))
      throw new Error(`${functionId}: no bundled asset for Code.S3Key ${JSON.stringify(key)} in ${assemblyDir} (synthesize with bundling)`);
    const handler = String(properties.Handler ?? '');
    const exportName = /^index\.([A-Za-z_$][\w$]*)$/.exec(handler)?.[1];
    if (exportName === undefined) throw new Error(`${functionId}: handler ${JSON.stringify(handler)} is not index.<export>`);
    const variables = ((properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {}) as Record<string, unknown>;
    const environment = Object.fromEntries(
      Object.entries(variables).map(([name, value]) => [name, String(resolveIntrinsics(template, value, `${functionId} ${name}`))]),
    );
    bundles.push({ functionId, file, exportName, environment });
  }
  return bundles;
}

/**
 * Import one bundle in a fresh Node process, alone in a temporary directory (so nothing from the
 * repository's node_modules can be resolved), and check its handler export.
 */
export function smokeTestBundle(bundle: LambdaBundle): BundleSmoke {
  const bytes = statSync(bundle.file).size;
  const tokenizerRanks = readFileSync(bundle.file, 'utf8').includes(TOKENIZER_RANKS_MARKER);
  const dir = mkdtempSync(path.join(tmpdir(), 'extagents-bundle-'));
  try {
    copyFileSync(bundle.file, path.join(dir, 'index.js'));
    if (existsSync(`${bundle.file}.map`)) copyFileSync(`${bundle.file}.map`, path.join(dir, 'index.js.map'));
    const probe = [
      'const started = process.hrtime.bigint();',
      'let handlerModule;',
      "try { handlerModule = require('./index.js'); } catch (e) { process.stdout.write(JSON.stringify({ thrown: `${e && e.name}: ${String(e && e.message).split('\\n')[0]}` })); process.exit(0); }",
      'const importMs = Number(process.hrtime.bigint() - started) / 1e6;',
      `const exported = handlerModule[${JSON.stringify(bundle.exportName)}];`,
      'process.stdout.write(JSON.stringify({ importMs, type: typeof exported, rssBytes: process.memoryUsage().rss }));',
    ].join('\n');
    const result = spawnSync(process.execPath, ['--enable-source-maps', '-e', probe], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 60_000,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        LAMBDA_TASK_ROOT: dir,
        AWS_REGION: PLACEHOLDER.region,
        AWS_LAMBDA_FUNCTION_NAME: bundle.functionId,
        ...bundle.environment,
        // The functions set NODE_OPTIONS=--enable-source-maps; passed as a flag above instead.
        NODE_OPTIONS: '',
      },
    });
    if (result.status !== 0) {
      const reason = (result.stderr || result.error?.message || `exit ${result.status}`).trim().split('\n').slice(0, 3).join(' | ');
      return { functionId: bundle.functionId, exportName: bundle.exportName, bytes, tokenizerRanks, error: `import failed: ${reason}` };
    }
    const probed = JSON.parse(result.stdout) as { importMs: number; type: string; rssBytes: number } | { thrown: string };
    if ('thrown' in probed)
      return { functionId: bundle.functionId, exportName: bundle.exportName, bytes, tokenizerRanks, error: `import failed: ${probed.thrown}` };
    return {
      functionId: bundle.functionId,
      exportName: bundle.exportName,
      bytes,
      tokenizerRanks,
      importMs: probed.importMs,
      rssBytes: probed.rssBytes,
      ...(probed.type !== 'function' && { error: `export ${bundle.exportName} is ${probed.type}, not a function` }),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
