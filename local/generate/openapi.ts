/**
 * Write docs/openapi.yaml from the API's route table and zod schemas (shared/api/openapi.ts):
 *
 *   npx tsx local/generate/openapi.ts           write the file
 *   npx tsx local/generate/openapi.ts --check   exit 1 when the committed file is out of date
 */
import path from 'node:path';
import { Document } from 'yaml';
import { buildOpenApiDocument } from '../../shared/api/openapi';
import { writeOrCheckGenerated } from './generated-file';

/** The committed document. */
export const OPENAPI_PATH = path.resolve(__dirname, '..', '..', 'docs', 'openapi.yaml');

/** The document as YAML text, with a header saying how it is made. */
export function renderOpenApiYaml(): string {
  const doc = new Document(buildOpenApiDocument());
  doc.commentBefore =
    ' Generated from shared/api (route table and zod schemas) by `npx tsx local/generate/openapi.ts`; do not edit by hand.\n' +
    ' test/unit/api-openapi.test.ts fails when this file is out of date.';
  return doc.toString({ lineWidth: 0 });
}

if (require.main === module) writeOrCheckGenerated(OPENAPI_PATH, renderOpenApiYaml(), 'npx tsx local/generate/openapi.ts');
