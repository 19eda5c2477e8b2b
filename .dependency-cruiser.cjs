/**
 * The house's import rules, checked by dependency-cruiser in `npm run lint` (`npm run depcruise`):
 * no import circle, and no import from a lower layer to a higher one (docs/ARCHITECTURE.md, "Layers").
 * The parser is swc: TypeScript 7 has no JavaScript API for dependency-cruiser's own TypeScript parser.
 * Source: https://github.com/sverweij/dependency-cruiser/blob/main/doc/rules-reference.md
 */
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'an import circle', from: {}, to: { circular: true } },
    {
      name: 'domain-without-adapters',
      severity: 'error',
      comment: 'shared/ is the domain: it never imports the model providers, the Lambda adapters, the CDK app, the local mode or the eval application',
      from: { path: '^shared/' },
      to: { path: '^(models|lambdas|infra|local|eval)/' },
    },
    {
      name: 'eval-app-over-the-domain',
      severity: 'error',
      comment:
        'eval/ (the evaluation application) runs strategies over the AgentModel port of shared/: it never imports the model providers, ' +
        'the Lambdas, the CDK app or the local mode (local/cli/eval-command.ts and local/engine/eval-workflow.ts import it)',
      from: { path: '^eval/' },
      to: { path: '^(models|lambdas|infra|local|bench|scripts)/' },
    },
    {
      name: 'domain-without-aws-sdk',
      severity: 'error',
      comment: 'shared/ never imports the AWS SDK (adapters live in models/ and lambdas/adapters/)',
      from: { path: '^shared/' },
      to: { path: 'node_modules/@aws-sdk/' },
    },
    {
      name: 'use-cases-without-http',
      severity: 'error',
      comment: 'the use cases (pipeline, survey, eval, the method) never import the HTTP API layer',
      from: { path: '^(shared|eval)/', pathNot: '^shared/api/' },
      to: { path: '^shared/api/' },
    },
    {
      name: 'models-below-hosts',
      comment:
        'models/ (the providers, over the domain) never imports the hosts that use it: the Lambda handlers and adapters, the CDK app, ' +
        'the local mode or the eval',
      severity: 'error',
      from: { path: '^models/' },
      to: { path: '^(lambdas|infra|local|bench|scripts)/' },
    },
    {
      name: 'one-table-of-providers',
      severity: 'error',
      comment:
        "a provider is reached through the table (models/index.ts), never by importing another provider's folder: a provider folder " +
        'imports only its own files, the port and the shared model helpers (models/*.ts)',
      from: { path: '^models/([^/]+)/' },
      to: { path: '^models/([^/]+)/', pathNot: '^models/$1/' },
    },
    {
      name: 'infra-without-providers',
      severity: 'error',
      comment: 'the CDK app never imports the model providers (they load the SDKs and node-llama-cpp); it reads the model traits (models/traits.ts, SDK-free)',
      from: { path: '^infra/' },
      to: { path: '^models/', pathNot: '^models/(traits|port|spec)\\.ts$|^models/[^/]+/traits\\.ts$' },
    },
    {
      name: 'traits-without-providers',
      severity: 'error',
      comment: 'the traits (what the CDK app reads of a model) import no provider module, so the CDK app loads no SDK through them',
      from: { path: '^models/(traits\\.ts$|spec\\.ts$|[^/]+/traits\\.ts$)' },
      to: { path: '^models/', pathNot: '^models/(port\\.ts$|spec\\.ts$|[^/]+/traits\\.ts$)' },
    },
    {
      name: 'lambdas-without-infra-or-local',
      severity: 'error',
      comment: 'Lambda handlers and adapters never import the CDK app or the local mode',
      from: { path: '^lambdas/' },
      to: { path: '^(infra|local)/' },
    },
    {
      name: 'infra-without-local',
      severity: 'error',
      comment: 'the CDK app never imports the local mode',
      from: { path: '^infra/' },
      to: { path: '^local/' },
    },
    {
      name: 'web-page-over-http-only',
      severity: 'error',
      comment:
        'the web page (browser code) talks to serve over HTTP: it never imports server code; web/src/types.ts alone imports ' +
        "the API's types (type-only: web/build.mjs fails when server code reaches the bundle; swc marks no import type-only)",
      from: { path: '^web/' },
      to: { path: '^(shared|models|lambdas|infra|local)/', pathNot: '^shared/(types|api/schemas)\\.ts$' },
    },
    {
      name: 'web-types-only-from-the-api',
      severity: 'error',
      comment: "only web/src/types.ts may import the API's types",
      from: { path: '^web/', pathNot: '^web/src/types\\.ts$' },
      to: { path: '^shared/' },
    },
    {
      name: 'engine-below-services-and-cli',
      severity: 'error',
      comment: 'the local engine never imports the local services, the library API, the CLI or the generators',
      from: { path: '^local/engine/' },
      to: { path: '^local/((services|cli|generate)/|library\\.ts$)' },
    },
    {
      name: 'services-below-cli',
      severity: 'error',
      comment: 'the local services never import the CLI',
      from: { path: '^local/services/' },
      to: { path: '^local/((cli|generate)/|library\\.ts$)' },
    },
    {
      name: 'commands-without-entry',
      severity: 'error',
      comment: 'commands never import the CLI entry (local/cli/cli.ts)',
      from: { path: '^local/', pathNot: '^local/cli/cli\\.ts$' },
      to: { path: '^local/cli/cli\\.ts$' },
    },
  ],
  options: {
    parser: 'swc',
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.json$' },
  },
};
