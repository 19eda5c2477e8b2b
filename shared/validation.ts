/**
 * Validation helpers shared by every schema of the project.
 *
 * One way to say what a zod validation found, in one line: `path: message; path: message`, the
 * issues in zod's order. (zod's own `z.prettifyError` writes several lines per issue; every error of
 * the project is one line.)
 */
import type { z } from 'zod';

/**
 * The text of one issue as the API and job files say it: a missing field is `required (<type>)`
 * (zod says "Invalid input: expected string, received undefined"), any other issue zod's message.
 */
export function issueDetail(issue: z.core.$ZodIssue): string {
  return issue.code === 'invalid_type' && issue.message.endsWith('received undefined') ? `required (${issue.expected})` : issue.message;
}

/** The messages of a validation of one value (no paths: the caller names the value), `message; message`. */
export function issueMessages(error: z.ZodError): string {
  return error.issues.map((issue) => issue.message).join('; ');
}

/**
 * @param fallback written as the path of an issue at the root (an empty path); default nothing.
 */
export function issuesText(error: z.ZodError, fallback = ''): string {
  return error.issues.map((issue) => `${issue.path.join('.') || fallback}: ${issue.message}`).join('; ');
}

/**
 * Object schemas whose validation requires exactly one of their (optional) properties, with a
 * refine that JSON Schema cannot carry; {@link exactlyOneJsonSchemaOverride} states it in JSON Schema.
 */
const EXACTLY_ONE_PROPERTY = new WeakSet<z.ZodType>();

/** Mark an object schema whose refine requires exactly one of its optional properties; returns it. */
export function exactlyOneProperty<T extends z.ZodType>(schema: T): T {
  EXACTLY_ONE_PROPERTY.add(schema);
  return schema;
}

/**
 * The `override` of every `z.toJSONSchema` call that documents the API (docs/openapi.yaml, the API
 * Gateway request models of infra/api.ts): an object of {@link EXACTLY_ONE_PROPERTY} becomes an
 * `anyOf` of one-property objects (each `required`, `additionalProperties: false`, so at most one
 * branch can match), the form JSON Schema tools generate valid values for (a `oneOf` of `required`
 * lists or `minProperties`/`maxProperties` made schemathesis 4.32 pair a header test with an invalid
 * body). The refine keeps the clear message at validation time.
 * Source: https://zod.dev/json-schema (override)
 */
export function exactlyOneJsonSchemaOverride(ctx: { zodSchema: unknown; jsonSchema: Record<string, unknown> }): void {
  if (!EXACTLY_ONE_PROPERTY.has(ctx.zodSchema as z.ZodType)) return;
  const schema = ctx.jsonSchema;
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  schema.anyOf = Object.entries(properties).map(([name, property]) => ({
    type: 'object',
    properties: { [name]: property },
    required: [name],
    additionalProperties: false,
  }));
  delete schema.type;
  delete schema.properties;
  delete schema.additionalProperties;
}
