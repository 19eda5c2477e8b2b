/**
 * CloudFormation intrinsic functions of a synthesized template, resolved against caller-chosen
 * values: the local engine resolves state-machine definitions to local ARNs (local/engine/definition.ts),
 * the deploy checks resolve IAM policies and Lambda environments to placeholder ARNs
 * (infra/checks/). Hand-written: CDK's own token resolution runs at synth time only and yields these
 * intrinsics; no maintained library evaluates a template offline with chosen values, and the six
 * functions below (`Ref`, `Fn::GetAtt`, `Fn::Join`, `Fn::Sub`, `Fn::Select`, `Fn::Split`) suffice for
 * CDK output.
 * Source: https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/intrinsic-function-reference.html
 */
import { ConfigurationError } from '../shared/errors';

/** One resource of a template (the parts read here). */
export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
}

/** The parts of a CloudFormation template the resolver reads. */
export interface CfnTemplate {
  Resources?: Record<string, CfnResource>;
  Parameters?: Record<string, { Type?: string; Default?: unknown }>;
}

/** The values a resolver substitutes: pseudo parameters and each resource's `Ref` and attributes. */
export interface IntrinsicValues {
  /** Names the values in errors: "local" (`has no local value`, `not supported locally`), "placeholder". */
  readonly label: string;
  readonly partition: string;
  readonly region: string;
  readonly account: string;
  readonly urlSuffix: string;
  readonly stackName: string;
  /** The value of `Ref` to a resource; undefined when it has none here. */
  ref(id: string, resource: CfnResource): string | undefined;
  /** The value of `Fn::GetAtt` of a resource's attribute; undefined when it has none here. */
  getAtt(id: string, attribute: string, resource: CfnResource): string | undefined;
}

/**
 * Resolves the intrinsics of a template's values.
 * @throws ConfigurationError (from `resolve`) naming the place, for an unknown logical id, a reference
 *   without a value here, an unsupported intrinsic function, or a non-scalar where a string is needed.
 */
export class IntrinsicResolver {
  private readonly resources: Record<string, CfnResource>;

  constructor(
    private readonly template: CfnTemplate,
    private readonly values: IntrinsicValues,
  ) {
    this.resources = template.Resources ?? {};
  }

  /** `value` with every intrinsic replaced by its value; `where` names it in errors. */
  resolve(value: unknown, where: string): unknown {
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map((v, i) => this.resolve(v, `${where}[${i}]`));
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 1) {
      const [key, arg] = entries[0];
      if (key === 'Ref') return this.ref(String(arg), where);
      if (key === 'Fn::GetAtt') {
        const [id, attr] = Array.isArray(arg) ? [String(arg[0]), String(arg[1])] : splitOnce(String(arg), '.');
        return this.getAtt(id, attr, where);
      }
      if (key === 'Fn::Join') {
        const [separator, parts] = arg as [string, unknown[]];
        const resolvedParts = this.resolve(parts, where);
        if (!Array.isArray(resolvedParts)) throw new ConfigurationError(`Fn::Join at ${where}: the list did not resolve to an array`);
        return resolvedParts.map((p) => scalarToString(p, where)).join(separator);
      }
      if (key === 'Fn::Select') {
        const [index, list] = arg as [unknown, unknown];
        const resolvedList = this.resolve(list, where);
        if (!Array.isArray(resolvedList)) throw new ConfigurationError(`Fn::Select at ${where}: the list did not resolve to an array`);
        return resolvedList[Number(this.resolve(index, where))];
      }
      if (key === 'Fn::Split') {
        const [separator, text] = arg as [string, unknown];
        return scalarToString(this.resolve(text, where), where).split(separator);
      }
      if (key === 'Fn::Sub') return this.sub(arg, where);
      if (key.startsWith('Fn::'))
        throw new ConfigurationError(
          `Intrinsic function ${key} at ${where} is not supported ${this.values.label === 'local' ? 'locally' : `(${this.values.label} values)`}`,
        );
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of entries) out[k] = this.resolve(v, `${where}.${k}`);
    return out;
  }

  private sub(arg: unknown, where: string): string {
    const [text, variables] = Array.isArray(arg) ? [String(arg[0]), (arg[1] ?? {}) as Record<string, unknown>] : [String(arg), {}];
    return text.replace(/\$\{(!?)([^}]*)\}/g, (_whole, bang: string, name: string) => {
      if (bang) return `\${${name}}`; // `${!Literal}` renders `${Literal}`
      if (Object.prototype.hasOwnProperty.call(variables, name)) return scalarToString(this.resolve(variables[name], where), where);
      if (name.includes('.')) {
        const [id, attr] = splitOnce(name, '.');
        return scalarToString(this.getAtt(id, attr, where), where);
      }
      return scalarToString(this.ref(name, where), where);
    });
  }

  private ref(name: string, where: string): unknown {
    const pseudo: Record<string, string> = {
      'AWS::Partition': this.values.partition,
      'AWS::Region': this.values.region,
      'AWS::AccountId': this.values.account,
      'AWS::URLSuffix': this.values.urlSuffix,
      'AWS::StackName': this.values.stackName,
    };
    if (pseudo[name] !== undefined) return pseudo[name];
    const parameter = this.template.Parameters?.[name];
    if (parameter !== undefined) {
      if (parameter.Default === undefined) throw new ConfigurationError(`Ref to template parameter '${name}' without a Default at ${where}`);
      return parameter.Default;
    }
    const resource = this.resources[name];
    if (resource === undefined) throw new ConfigurationError(`Ref to unknown logical id '${name}' at ${where}`);
    const value = this.values.ref(name, resource);
    if (value === undefined) throw new ConfigurationError(`Ref to ${name} (${resource.Type}) at ${where} has no ${this.values.label} value`);
    return value;
  }

  private getAtt(id: string, attr: string, where: string): unknown {
    const resource = this.resources[id];
    if (resource === undefined) throw new ConfigurationError(`Fn::GetAtt of unknown logical id '${id}' at ${where}`);
    const value = this.values.getAtt(id, attr, resource);
    if (value === undefined) throw new ConfigurationError(`Fn::GetAtt ${id}.${attr} (${resource.Type}) at ${where} has no ${this.values.label} value`);
    return value;
  }
}

function splitOnce(text: string, separator: string): [string, string] {
  const at = text.indexOf(separator);
  return at < 0 ? [text, ''] : [text.slice(0, at), text.slice(at + separator.length)];
}

function scalarToString(value: unknown, where: string): string {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new ConfigurationError(`Expected a string at ${where}, got ${JSON.stringify(value)}`);
}
