/**
 * The optional peer dependencies of the `extagents` package (package.json `peerDependencies`, all
 * `optional` in `peerDependenciesMeta`): packages that only one feature loads, which an install of
 * the library does not bring (issue 26, item 1: node-llama-cpp alone is 700 MB of binaries). The
 * feature loads its package on first use through {@link loadOptionalPackage}; when it is not
 * installed, the feature fails with a MissingPackageError naming the package and the command that
 * installs the version this package was built and tested with (the range of `peerDependencies`, so
 * the pin has one home).
 */
import { peerDependencies } from '../package.json';
import { MissingPackageError } from './errors';

/** An optional peer dependency: a key of package.json's `peerDependencies`. */
export type OptionalPackage = keyof typeof peerDependencies;

/** Is `name` an optional peer dependency of the package? */
export function isOptionalPackage(name: string): name is OptionalPackage {
  return Object.hasOwn(peerDependencies, name);
}

/** The install command of `packages`: exact pins with `--save-exact`, ranges quoted for the shell. */
export function installCommand(packages: readonly OptionalPackage[]): string {
  const specs = packages.map((name) => {
    const range = peerDependencies[name];
    return /^\d[\w.+-]*$/.test(range) ? `${name}@${range}` : `'${name}@${range}'`;
  });
  const exact = packages.every((name) => /^\d[\w.+-]*$/.test(peerDependencies[name]));
  return `npm install ${exact ? '--save-exact ' : ''}${specs.join(' ')}`;
}

/**
 * Is `error` Node's "module not found" for `name` itself (not for a module that `name` failed to
 * load inside it, which is a broken install and keeps its own message)?
 */
export function isMissingModule(error: unknown, name: string): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as Error & { code?: unknown }).code;
  if (code !== 'MODULE_NOT_FOUND' && code !== 'ERR_MODULE_NOT_FOUND') return false;
  return error.message.includes(`'${name}'`) || error.message.includes(`"${name}"`);
}

/**
 * The error of a feature whose optional packages are missing.
 * @param feature what needs them, a plural noun phrase ("llama: models", "the eval report's charts")
 */
export function missingPackageError(feature: string, packages: readonly OptionalPackage[], cause?: unknown): MissingPackageError {
  const install = installCommand(packages);
  const one = packages.length === 1;
  return new MissingPackageError(
    `${feature} need the npm package${one ? '' : 's'} ${packages.join(', ')} (${one ? 'an optional peer dependency' : 'optional peer dependencies'} ` +
      `of extagents, not installed): ${install}`,
    { cause, install },
  );
}

/**
 * Load optional CommonJS packages for `feature` (e.g. "the eval report's charts"), each with
 * `load` (a `require` of it in the calling module, so a bundler keeps it external and a test can
 * mock it).
 * @throws MissingPackageError naming every package of `packages` that is not installed.
 */
export function loadOptionalPackages<T>(feature: string, packages: readonly OptionalPackage[], load: () => T): T {
  try {
    return load();
  } catch (error) {
    const missing = packages.filter((name) => isMissingModule(error, name));
    if (missing.length > 0) throw missingPackageError(feature, packages, error);
    throw error;
  }
}
