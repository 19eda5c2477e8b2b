/**
 * Acknowledgments (suppressions) of cdk-nag AwsSolutions findings, each with its reason in code.
 * The pack runs in the infrastructure tests (test/infra/nag.test.ts); cdk-nag 3 reports through
 * CDK's policy validation and reads acknowledgments recorded with `Validations.of(x).acknowledge`.
 * Source: https://github.com/cdklabs/cdk-nag (README, MIGRATION.md), rules: RULES.md.
 *
 * Wildcard findings of AwsSolutions-IAM5 are reported one per wildcard action or resource, named by
 * the rendered policy (`AwsSolutions-IAM5[Resource::<Bucket83908E77.Arn>/runs/*]`), and the names
 * hold logical ids known only at synthesis. {@link acknowledgeIamWildcards} therefore matches them
 * with a pattern per kind of wildcard: an Aspect renders each IAM policy under a scope like cdk-nag
 * does and acknowledges the findings a pattern accepts, with that pattern's reason. Findings no
 * pattern accepts stay reported, so a new wildcard fails the nag test until it is reviewed.
 */
import { Aspects, Stack, Validations, type IAspect } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { IConstruct } from 'constructs';

/** Acknowledge one rule (or one finding, `RuleId[finding]`) on a construct and everything below it. */
export function acknowledgeRule(scope: IConstruct, id: string, reason: string): void {
  Validations.of(scope).acknowledge({ id, reason });
}

/** An accepted kind of IAM wildcard: a pattern over the finding (`Action::…` or `Resource::…`). */
export interface WildcardAcknowledgment {
  finding: RegExp;
  /**
   * When given, the finding is accepted only if every action of every statement that produced it
   * matches (e.g. `Resource::*` only for X-Ray actions).
   */
  actions?: RegExp;
  reason: string;
}

/**
 * Acknowledge the AwsSolutions-IAM5 findings of every IAM policy below `scope` that one of `rules`
 * matches (the first matching rule's reason is recorded).
 */
export function acknowledgeIamWildcards(scope: IConstruct, rules: readonly WildcardAcknowledgment[]): void {
  Aspects.of(scope).add(new AcknowledgeIamWildcards(rules));
}

class AcknowledgeIamWildcards implements IAspect {
  constructor(private readonly rules: readonly WildcardAcknowledgment[]) {}

  visit(node: IConstruct): void {
    if (!(node instanceof iam.CfnPolicy)) return;
    const document = Stack.of(node).resolve(node.policyDocument) as PolicyDocumentJson;
    for (const [finding, actions] of iamWildcardFindings(document)) {
      const rule = this.rules.find((r) => r.finding.test(finding) && (r.actions === undefined || actions.every((a) => r.actions?.test(a))));
      if (rule) acknowledgeRule(node, `AwsSolutions-IAM5[${finding}]`, rule.reason);
    }
  }
}

/** A resolved IAM policy document (the parts read here). */
interface PolicyDocumentJson {
  Statement?: Array<{ Effect?: string; Action?: unknown; Resource?: unknown }>;
}

/**
 * The AwsSolutions-IAM5 findings of a policy document, named as cdk-nag names them, each with the
 * actions of the statements that produced it: for each Allow statement, `Action::<action>` for an
 * action with `*`, `Resource::<flattened>` for a resource whose flattened form has `*` (Ref -> `<Id>`,
 * Fn::GetAtt -> `<Id.Attr>`, Fn::Join joined, other objects as JSON). Mirrors cdk-nag 3's
 * rules/iam/IAMNoWildcardPermissions and utils/flatten-cfn-reference.
 */
export function iamWildcardFindings(document: PolicyDocumentJson): Map<string, string[]> {
  const findings = new Map<string, string[]>();
  const add = (finding: string, actions: string[]): void => {
    findings.set(finding, [...(findings.get(finding) ?? []), ...actions]);
  };
  for (const statement of document.Statement ?? []) {
    if (statement.Effect !== 'Allow') continue;
    const actions = [statement.Action].flat().filter((a): a is string => typeof a === 'string');
    for (const action of actions) if (action.includes('*')) add(`Action::${action}`, actions);
    for (const resource of [statement.Resource].flat()) {
      const flat = flattenReference(resource);
      if (flat.includes('*')) add(`Resource::${flat}`, actions);
    }
  }
  return findings;
}

function flattenReference(node: unknown): string {
  if (node === undefined) return '';
  if (typeof node === 'string') return node.replace(/\${/g, '<').replace(/}/g, '>');
  if (typeof node === 'object' && node !== null) {
    const object = node as Record<string, unknown>;
    if (object['Fn::Join']) {
      const [delimiter, items] = object['Fn::Join'] as [string, unknown[]];
      return items.map(flattenReference).join(delimiter);
    }
    if (object['Fn::Sub']) return flattenReference(object['Fn::Sub']);
    if (object['Fn::GetAtt']) {
      const [resource, attribute] = object['Fn::GetAtt'] as [unknown, unknown];
      return `<${flattenReference(resource)}.${flattenReference(attribute)}>`;
    }
    if (object['Fn::ImportValue']) return flattenReference(object['Fn::ImportValue']);
    if (object.Ref) return `<${flattenReference(object.Ref)}>`;
  }
  return JSON.stringify(node);
}

/**
 * The reviewed findings of the ExtAgents stack (all constructs in it, the API's included), each with
 * its reason. Resource-specific acknowledgments sit next to their resources (the access log bucket,
 * the alarm topic).
 */
export function acknowledgeStackFindings(stack: Stack): void {
  acknowledgeIamWildcards(stack, [
    {
      finding: /^Action::s3:(GetObject|GetBucket|List|Abort|DeleteObject)\*$/,
      reason: 'Action groups of the CDK bucket grants (grantRead/grantPut/grantReadWrite): read, list, multipart abort of the project bucket only.',
    },
    {
      finding: /^Resource::(<Bucket[A-Za-z0-9]+\.Arn>|arn:<AWS::Partition>:s3:::<Bucket[A-Za-z0-9]+>)\/([A-Za-z0-9_./-]*\/)?\*$/,
      reason: 'Objects of the project bucket only, scoped to the key prefixes the function uses where it uses few (runs/, corpora/, cache/, …); object keys are chosen at run time (run ids, corpus files).',
    },
    {
      finding: /^Resource::<Table[A-Za-z0-9]+\.Arn>\/index\/\*$/,
      reason: 'The run table\'s own global secondary indexes (byRelevance): CDK table grants name them with a wildcard.',
    },
    {
      finding: /^Resource::<[A-Za-z0-9]+\.Arn>:\*$/,
      actions: /^lambda:InvokeFunction$/,
      reason: 'Versions and aliases of the project\'s own Lambda functions (the CDK LambdaInvoke grant), nothing else.',
    },
    {
      finding: /^Resource::arn:<AWS::Partition>:states:.+:(execution|mapRun):.+\*$/,
      actions: /^states:(DescribeExecution|StopExecution|RedriveExecution|StartExecution|DescribeMapRun|UpdateMapRun|ListMapRuns)$/,
      reason: 'Executions (and Map Runs) of the project\'s own state machines: their names are chosen at run time (Distributed Map children, job questions).',
    },
    {
      finding: /^Resource::arn:<AWS::Partition>:bedrock:\*::foundation-model\/.+$/,
      actions: /^bedrock:InvokeModel$/,
      reason: 'A cross-region inference profile routes to the named foundation model in any of its regions; the model id is fixed, only the region is open.',
    },
    {
      finding: /^Resource::\*$/,
      actions: /^(xray:(PutTraceSegments|PutTelemetryRecords|GetSamplingRules|GetSamplingTargets)|logs:(CreateLogDelivery|GetLogDelivery|UpdateLogDelivery|DeleteLogDelivery|ListLogDeliveries|PutResourcePolicy|DescribeResourcePolicies|DescribeLogGroups))$/,
      reason: 'X-Ray tracing and CloudWatch Logs vended log delivery support no resource-level permissions (Resource must be *).',
    },
  ]);
  acknowledgeRule(
    stack,
    'AwsSolutions-SF1',
    'State machines log at ERROR without execution data by default (stateMachineLogLevel, CDK context stateMachineLogLevel): ALL would log every state of every Distributed Map item (one per chunk and round) and the question text; X-Ray traces every execution.',
  );
}
