/**
 * The IAM policies of a synthesized template with their intrinsics resolved to concrete placeholder
 * ARNs, for a policy linter (parliament) that judges actions against resources and cannot read
 * `Fn::GetAtt`, `Fn::Join` or `AWS::Partition`. Written by hand: no maintained npm package resolves
 * CloudFormation intrinsics offline (the CloudFormation service does it at deploy time).
 *
 * Placeholders: partition `aws`, region `us-east-1`, account `123456789012`; a resource's physical
 * name is its logical id in lower case (`bucket83908e77`), and its ARN has the form its service
 * documents (Service Authorization Reference, "Resource types"), so an action is judged against a
 * resource of the right type. The intrinsics are resolved by infra/intrinsics.ts (shared with the
 * local engine, which resolves the same template to local values).
 */
import { IntrinsicResolver, type CfnResource, type CfnTemplate, type IntrinsicValues } from '../intrinsics';

/** A CloudFormation template (the parts read here). */
export interface Template extends CfnTemplate {
  Resources: Record<string, CfnResource>;
}

/** One policy document of the template, resolved. */
export interface ResolvedPolicy {
  /** Where it comes from: `<logicalId>` or `<logicalId>/<policyName>` (a role's inline policy). */
  source: string;
  /** `identity` (IAM::Policy, a role's inline policy) or `resource` (bucket or queue policy). */
  kind: 'identity' | 'resource';
  document: unknown;
}

/** The placeholder environment of {@link resolvePolicies}. */
export const PLACEHOLDER = { partition: 'aws', region: 'us-east-1', account: '123456789012', urlSuffix: 'amazonaws.com' } as const;

/**
 * Every IAM policy document of a template (AWS::IAM::Policy, AWS::IAM::ManagedPolicy, inline policies
 * of AWS::IAM::Role; AWS::S3::BucketPolicy and AWS::SQS::QueuePolicy as resource policies), resolved.
 * @throws ConfigurationError naming the intrinsic or reference it cannot resolve (infra/intrinsics.ts).
 */
export function resolvePolicies(template: Template): ResolvedPolicy[] {
  const resolver = new IntrinsicResolver(template, PLACEHOLDER_VALUES);
  const policies: ResolvedPolicy[] = [];
  for (const [id, resource] of Object.entries(template.Resources)) {
    const properties = resource.Properties ?? {};
    switch (resource.Type) {
      case 'AWS::IAM::Policy':
      case 'AWS::IAM::ManagedPolicy':
        policies.push({ source: id, kind: 'identity', document: resolver.resolve(properties.PolicyDocument, id) });
        break;
      case 'AWS::IAM::Role':
        for (const inline of (properties.Policies as Array<{ PolicyName: string; PolicyDocument: unknown }> | undefined) ?? []) {
          policies.push({ source: `${id}/${inline.PolicyName}`, kind: 'identity', document: resolver.resolve(inline.PolicyDocument, id) });
        }
        break;
      case 'AWS::S3::BucketPolicy':
      case 'AWS::SQS::QueuePolicy':
        policies.push({ source: id, kind: 'resource', document: resolver.resolve(properties.PolicyDocument, id) });
        break;
      default:
        break;
    }
  }
  return policies;
}

/**
 * Any value of a template (an environment variable, a policy) with its intrinsics resolved to the
 * same placeholders as {@link resolvePolicies}.
 * @param where names the value in errors (`<logicalId>`).
 * @throws ConfigurationError naming the intrinsic or reference it cannot resolve (infra/intrinsics.ts).
 */
export function resolveIntrinsics(template: Template, value: unknown, where: string): unknown {
  return new IntrinsicResolver(template, PLACEHOLDER_VALUES).resolve(value, where);
}

/**
 * Placeholder values: a resource's physical name is its logical id in lower case, and its ARN has
 * the form its service documents (Service Authorization Reference, "Resource types").
 */
const PLACEHOLDER_VALUES: IntrinsicValues = {
  label: 'placeholder',
  ...PLACEHOLDER,
  stackName: 'ExtAgents',
  ref(id, resource) {
    const name = id.toLowerCase();
    const { region, account } = PLACEHOLDER;
    switch (resource.Type) {
      case 'AWS::StepFunctions::StateMachine':
        return `arn:aws:states:${region}:${account}:stateMachine:${name}`;
      case 'AWS::SNS::Topic':
        return `arn:aws:sns:${region}:${account}:${name}`;
      case 'AWS::SQS::Queue':
        return `https://sqs.${region}.amazonaws.com/${account}/${name}`;
      case 'AWS::IAM::ManagedPolicy':
        return `arn:aws:iam::${account}:policy/${name}`;
      default:
        // Buckets, tables, functions, roles, log groups, rest APIs: Ref is the physical name or id.
        return name;
    }
  },
  getAtt(id, attribute, resource) {
    const name = id.toLowerCase();
    const { region, account } = PLACEHOLDER;
    const arns: Record<string, string> = {
      'AWS::S3::Bucket': `arn:aws:s3:::${name}`,
      'AWS::DynamoDB::Table': `arn:aws:dynamodb:${region}:${account}:table/${name}`,
      'AWS::Lambda::Function': `arn:aws:lambda:${region}:${account}:function:${name}`,
      'AWS::SQS::Queue': `arn:aws:sqs:${region}:${account}:${name}`,
      'AWS::Logs::LogGroup': `arn:aws:logs:${region}:${account}:log-group:${name}:*`,
      'AWS::IAM::Role': `arn:aws:iam::${account}:role/${name}`,
      'AWS::Events::Rule': `arn:aws:events:${region}:${account}:rule/${name}`,
      'AWS::StepFunctions::StateMachine': `arn:aws:states:${region}:${account}:stateMachine:${name}`,
      'AWS::SNS::Topic': `arn:aws:sns:${region}:${account}:${name}`,
      'AWS::Scheduler::Schedule': `arn:aws:scheduler:${region}:${account}:schedule/default/${name}`,
    };
    if (attribute === 'Arn') return arns[resource.Type];
    if (resource.Type === 'AWS::StepFunctions::StateMachine' && attribute === 'Name') return name;
    if (resource.Type === 'AWS::SQS::Queue' && attribute === 'QueueName') return name;
    if (resource.Type === 'AWS::ApiGateway::RestApi' && attribute === 'RootResourceId') return `${name}root`;
    return undefined;
  },
};

/** One entry of a parliament RESOURCE_MISMATCH finding's `detail`. */
export interface ResourceMismatch {
  action: string;
  required_format: string;
}

/** A reviewed kind of parliament RESOURCE_MISMATCH (infra/nag.ts PARLIAMENT_ACCEPTED). */
export interface AcceptedMismatch {
  action: string;
  requiredFormat: RegExp;
  resources: RegExp;
  reason: string;
}

/**
 * Whether a mismatch parliament reports on `document` is one of `accepted`: same action, a required
 * format the entry names, and every resource of every statement granting that action matching the
 * entry's `resources` (so a broader grant of the same action is not accepted).
 */
export function isAcceptedMismatch(mismatch: ResourceMismatch, document: unknown, accepted: readonly AcceptedMismatch[]): boolean {
  const rule = accepted.find((r) => r.action === mismatch.action && r.requiredFormat.test(mismatch.required_format));
  if (rule === undefined) return false;
  const statements = ((document as { Statement?: unknown } | undefined)?.Statement ?? []) as Array<{ Action?: unknown; Resource?: unknown }>;
  const resources = [statements]
    .flat()
    .filter((s) => [s.Action].flat().includes(mismatch.action))
    .flatMap((s) => [s.Resource].flat().map(String));
  return resources.length > 0 && resources.every((resource) => rule.resources.test(resource));
}
