/**
 * Which files outside a model provider's folder name that provider: the true count of files a new
 * provider of the same shape touches (issue 39; docs/ARCHITECTURE.md, "Models").
 *
 *   npx tsx scripts/provider-files.ts [<kind> ...]     (default: every kind of models/index.ts)
 *
 * For each kind it reads every tracked TypeScript file (`git ls-files '*.ts'`) but those under
 * `models/<kind>/`, parses it (@babel/parser with its TypeScript plugin: comments and docstrings are
 * not code, so they are not counted) and lists the files whose code names the provider:
 * - `import`: an import or `require` of a module under `models/<kind>/`;
 * - `kind`: a string literal that is the kind (`'openai'`) or a spec of it (`'openai:…'`);
 * - `name`: an identifier that contains the kind's name, any case (`openAiOptions`, `BedrockDeps`).
 * Each file is printed once with the reasons found in it; tests, benches and eval code are listed
 * apart from the product's code. Prints counts per kind at the end; exits 0 (a report, not a check),
 * or 2 for a kind the provider table does not list.
 *
 * Hand-written: no library counts a name's uses by file this way; a maintained parser does the
 * reading (the project's TypeScript 7 has no JavaScript compiler API).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from '@babel/parser';

const ROOT = path.resolve(__dirname, '..');

/** The kinds of the provider table (models/index.ts), read from its source so this script loads no provider. */
function tableKinds(): string[] {
  const text = readFileSync(path.join(ROOT, 'models/index.ts'), 'utf8');
  const table = /const PROVIDERS = \{([\s\S]*?)\}/.exec(text)?.[1] ?? '';
  return [...table.matchAll(/^\s*(\w+):/gm)].map((m) => m[1]);
}

/** A node of @babel/parser's tree, as far as this script reads it. */
interface Node {
  type: string;
  [key: string]: unknown;
}

/**
 * What in one file's code names `kind`: `import`, `kind`, `name` (see the file comment); empty when nothing does.
 * @param file the file's path relative to the repository root, with forward slashes (imports resolve from it).
 * @param text its TypeScript source.
 */
export function reasonsIn(file: string, text: string, kind: string): Set<string> {
  const reasons = new Set<string>();
  const ast = parse(text, { sourceType: 'module', plugins: ['typescript'], errorRecovery: true }) as unknown as Node;
  const dir = path.posix.dirname(file);
  const folder = `models/${kind}`;
  const underFolder = (specifier: unknown): boolean => {
    if (typeof specifier !== 'string' || !specifier.startsWith('.')) return false;
    const resolved = path.posix.normalize(path.posix.join(dir, specifier));
    return resolved === folder || resolved.startsWith(`${folder}/`);
  };
  const lower = kind.toLowerCase();
  const stringValue = (node: Node | undefined): unknown => (node?.type === 'StringLiteral' ? node.value : undefined);
  const visit = (node: Node): void => {
    switch (node.type) {
      case 'ImportDeclaration':
      case 'ExportNamedDeclaration':
      case 'ExportAllDeclaration':
        if (underFolder(stringValue(node.source as Node | undefined))) reasons.add('import');
        break;
      case 'TSImportType':
        if (
          underFolder(
            stringValue((node.argument as Node | undefined)?.type === 'TSLiteralType' ? ((node.argument as Node).literal as Node) : (node.argument as Node)),
          )
        )
          reasons.add('import');
        break;
      case 'CallExpression': {
        const callee = node.callee as Node;
        const args = node.arguments as Node[];
        if (((callee.type === 'Identifier' && callee.name === 'require') || callee.type === 'Import') && underFolder(stringValue(args[0])))
          reasons.add('import');
        break;
      }
      case 'StringLiteral':
        if (node.value === kind || String(node.value).startsWith(`${kind}:`)) reasons.add('kind');
        break;
      case 'TemplateLiteral': {
        const quasis = node.quasis as Node[];
        const first = (quasis[0]?.value as { cooked?: string } | undefined)?.cooked ?? '';
        if ((quasis.length === 1 && first === kind) || first.startsWith(`${kind}:`)) reasons.add('kind');
        break;
      }
      case 'Identifier':
        if (String(node.name).toLowerCase().includes(lower)) reasons.add('name');
        break;
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'loc' || key === 'leadingComments' || key === 'trailingComments' || key === 'innerComments' || key === 'extra') continue;
      if (Array.isArray(value)) {
        for (const child of value) if (child !== null && typeof child === 'object' && typeof (child as Node).type === 'string') visit(child as Node);
      } else if (value !== null && typeof value === 'object' && typeof (value as Node).type === 'string') visit(value as Node);
    }
  };
  visit(ast);
  return reasons;
}

function main(): void {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`${readFileSync(__filename, 'utf8').split('*/')[0]}*/\n`);
    return;
  }
  const known = tableKinds();
  const kinds = args.length > 0 ? args : known;
  for (const kind of kinds) {
    if (!known.includes(kind)) {
      process.stderr.write(`provider-files: unknown kind "${kind}" (models/index.ts lists ${known.join(', ')})\n`);
      process.exit(2);
    }
  }
  const files = execFileSync('git', ['ls-files', '*.ts'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f !== '' && !f.endsWith('.d.ts'));
  const totals: string[] = [];
  for (const kind of kinds) {
    const product: string[] = [];
    const other: string[] = [];
    for (const file of files) {
      if (file.startsWith(`models/${kind}/`)) continue;
      const reasons = reasonsIn(file, readFileSync(path.join(ROOT, file), 'utf8'), kind);
      if (reasons.size === 0) continue;
      const line = `  ${file} (${[...reasons].sort().join(', ')})`;
      if (/^(test|bench|eval)\//.test(file)) other.push(line);
      else product.push(line);
    }
    process.stdout.write(`== ${kind}: ${product.length} product files outside models/${kind}/ name it\n${product.join('\n')}\n`);
    process.stdout.write(`   and ${other.length} test, bench and eval files\n${other.join('\n')}\n\n`);
    totals.push(`${kind} ${product.length} (+${other.length})`);
  }
  process.stdout.write(`product files naming each provider outside its folder (+ tests, benches, eval): ${totals.join('; ')}\n`);
}

if (require.main === module) main();
