/**
 * Helpers shared by the CDK assertion tests (test/infra): the test account and region, JSON types,
 * and resolution of the intrinsic functions CDK renders into a state machine definition.
 */
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
