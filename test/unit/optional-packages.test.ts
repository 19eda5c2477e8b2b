/**
 * The optional peer dependencies (shared/optional-packages.ts): a feature whose package is not
 * installed fails with MissingPackageError naming the package and the command that installs the
 * version package.json's `peerDependencies` gives; any other load failure keeps its own error.
 */
import { peerDependencies, peerDependenciesMeta } from '../../package.json';
import { ConfigurationError, MissingPackageError } from '../../shared/errors';
import { installCommand, isMissingModule, loadOptionalPackages, missingPackageError } from '../../shared/optional-packages';

const notFound = (message: string, code = 'MODULE_NOT_FOUND'): Error => Object.assign(new Error(message), { code });

describe('optional packages', () => {
  it('are all optional peers', () => {
    expect(Object.keys(peerDependenciesMeta).sort()).toEqual(Object.keys(peerDependencies).sort());
    expect(Object.values(peerDependenciesMeta).every((meta) => meta.optional)).toBe(true);
  });

  it('install an exact pin with --save-exact, and quote a range for the shell', () => {
    expect(installCommand(['node-llama-cpp'])).toBe(`npm install --save-exact node-llama-cpp@${peerDependencies['node-llama-cpp']}`);
    expect(installCommand(['vega', 'vega-lite'])).toBe(`npm install 'vega@${peerDependencies.vega}' 'vega-lite@${peerDependencies['vega-lite']}'`);
  });

  it('tell a missing package from a module missing inside it (CommonJS and ES module errors)', () => {
    expect(isMissingModule(notFound("Cannot find module 'vega'\nRequire stack: ..."), 'vega')).toBe(true);
    expect(isMissingModule(notFound("Cannot find package 'node-llama-cpp' imported from /x/index.cjs", 'ERR_MODULE_NOT_FOUND'), 'node-llama-cpp')).toBe(true);
    expect(isMissingModule(notFound("Cannot find module 'd3-scale'"), 'vega')).toBe(false);
    expect(isMissingModule(new Error("Cannot find module 'vega'"), 'vega')).toBe(false);
  });

  it('fail a feature with MissingPackageError, a ConfigurationError naming the package and its install command', () => {
    const error = missingPackageError('llama: models', ['node-llama-cpp']);

    expect(error).toBeInstanceOf(MissingPackageError);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.name).toBe('MissingPackageError');
    expect(error.install).toBe(`npm install --save-exact node-llama-cpp@${peerDependencies['node-llama-cpp']}`);
    expect(error.message).toBe(`llama: models need the npm package node-llama-cpp (an optional peer dependency of extagents, not installed): ${error.install}`);
  });

  it('load what is installed, name every package of the feature when one is missing, and rethrow other failures', () => {
    expect(loadOptionalPackages('charts', ['vega'], () => 42)).toBe(42);
    const missing = (): never => {
      throw notFound("Cannot find module 'vega-lite'");
    };
    expect(() => loadOptionalPackages("the eval report's charts", ['vega', 'vega-lite'], missing)).toThrow(MissingPackageError);
    expect(() => loadOptionalPackages("the eval report's charts", ['vega', 'vega-lite'], missing)).toThrow(/vega, vega-lite .*npm install 'vega@/);
    const broken = (): never => {
      throw new TypeError('not a function');
    };
    expect(() => loadOptionalPackages('charts', ['vega'], broken)).toThrow(TypeError);
  });
});
