/**
 * Helpers shared by the CDK assertion tests (test/infra): the test account and region, JSON types,
 * resolution of the intrinsic functions CDK renders into a state machine definition, and queries of
 * a synthesized template (resources by logical id, role policies).
 */
import type { Template } from 'aws-cdk-lib/assertions';

export const ACCOUNT = '123456789012';
export const REGION = 'us-west-2';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** Ref -> `${Id}`, Fn::GetAtt -> `${Id.Attr}`, Fn::Join joined, pseudo parameters to test values. */
export function resolveIntrinsics(value: Json): Json {
  if (Array.isArray(value)) return value.map(resolveIntrinsics);
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  if (keys.length === 1 && keys[0] === 'Ref') {
    const pseudo: Record<string, string> = { 'AWS::Partition': 'aws', 'AWS::Region': REGION, 'AWS::AccountId': ACCOUNT };
    return pseudo[value.Ref as string] ?? `\${${value.Ref as string}}`;
  }
  if (keys.length === 1 && keys[0] === 'Fn::GetAtt') {
    const [logicalId, attribute] = value['Fn::GetAtt'] as string[];
    return `\${${logicalId}.${attribute}}`;
  }
  if (keys.length === 1 && keys[0] === 'Fn::Join') {
    const [separator, parts] = value['Fn::Join'] as [string, Json[]];
    return parts.map((part) => String(resolveIntrinsics(part))).join(separator);
  }
  return Object.fromEntries(keys.map((key) => [key, resolveIntrinsics(value[key])]));
}

/** The one resource of a type whose logical id starts with (or matches) `prefix`; asserts there is exactly one. */
export function idStartingWith(template: Template, type: string, prefix: string | RegExp): string {
  const ids = Object.keys(template.findResources(type)).filter((id) => (typeof prefix === 'string' ? id.startsWith(prefix) : prefix.test(id)));
  expect(ids).toHaveLength(1);
  return ids[0];
}

/** A resource of the template by logical id. */
export function resourceOf(template: Template, id: string): { Properties: JsonObject } {
  return template.toJSON().Resources[id] as { Properties: JsonObject };
}

/** The IAM policy statements attached to a role (intrinsics resolved by `resolveIntrinsics`). */
export function statementsOfRole(template: Template, roleLogicalId: string): JsonObject[] {
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(`"${roleLogicalId}"`))
    .flatMap((policy) => resolveIntrinsics(policy.Properties.PolicyDocument.Statement) as JsonObject[]);
}

/** The logical id of the role a resource (a function: `Role`; a state machine: `RoleArn`) runs as. */
export function roleOf(template: Template, resourceId: string, property: 'Role' | 'RoleArn'): string {
  return ((resourceOf(template, resourceId).Properties[property] as JsonObject)['Fn::GetAtt'] as string[])[0];
}

/** Does a statement allow `action` on exactly `resource`? */
export function allows(statements: JsonObject[], action: string, resource: string): boolean {
  return statements.some((s) => [s.Action].flat().includes(action) && [s.Resource].flat().includes(resource));
}
