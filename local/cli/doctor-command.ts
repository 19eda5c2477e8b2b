/**
 * `extagents doctor` (local/cli/commands.ts lists it): before `npx cdk deploy`, check the AWS region,
 * credentials, the CDK bootstrap and Amazon Bedrock access to the model ids of the spec
 * (local/services/doctor.ts), each problem with the command that fixes it. Exit status 0 when every
 * check passed (or was not needed), 1 when one failed.
 */
import { type Command, Option } from 'commander';
import { DEFAULT_MODEL_SPEC } from '../../models/spec';
import { loadOptionalPackages } from '../../shared/optional-packages';
import { parseModelFlag } from './common';

/** The AWS SDK clients of local/services/doctor.ts. */
const DOCTOR_PACKAGES = ['@aws-sdk/client-bedrock', '@aws-sdk/client-ssm', '@aws-sdk/client-sts'] as const;

/** Add `doctor` to the program. */
export function addDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .addOption(new Option('-m, --model <spec>', 'the model spec the stack will deploy (CDK context model)').default(DEFAULT_MODEL_SPEC))
    .option('--json', 'print the checks as one JSON array on stdout', false)
    .action(async (opts: { model: string; json: boolean }) => {
      const spec = parseModelFlag(opts.model);
      // The AWS SDK clients load only when doctor runs. They are optional peers of the npm package
      // (a deploy's check, not ask's, survey's or serve's): missing, doctor fails with MissingPackageError.
      const { runDoctor } = loadOptionalPackages(
        'extagents doctor and its checks',
        DOCTOR_PACKAGES,
        () => require('../services/doctor') as typeof import('../services/doctor'),
      );
      const checks = await runDoctor(spec);
      if (opts.json) process.stdout.write(`${JSON.stringify(checks)}\n`);
      else {
        for (const c of checks) {
          process.stdout.write(`${c.status === 'ok' ? 'ok     ' : c.status === 'fail' ? 'FAILED ' : 'skipped'} ${c.name}: ${c.detail}\n`);
          if (c.fix) process.stdout.write(`        fix: ${c.fix}\n`);
        }
        const failed = checks.filter((c) => c.status === 'fail').length;
        const skipped = checks.filter((c) => c.status === 'skipped' && c.name !== 'model').length;
        process.stdout.write(
          failed === 0
            ? 'ready to deploy: npx cdk deploy\n'
            : `${failed} problem(s) to fix before npx cdk deploy${skipped > 0 ? `; ${skipped} check(s) skipped until then (run doctor again after the fix)` : ''}\n`,
        );
      }
      if (checks.some((c) => c.status === 'fail')) process.exitCode = 1;
    });
}
