import { ConfigurationError } from '../../shared/errors';
import {
  LOCAL_DISTRIBUTED_MAP_RESOURCE,
  localizeDistributedMaps,
  LOCAL_PARALLEL_RESOURCE,
  resolveStateMachineDefinition,
  StatesError,
  type AslDefinition,
  type AslState,
} from '../../local/engine/definition';
import { isThresholdExceeded, unsupportedDistributedMapFeatures } from '../../local/engine/distributed-map';

/** A template shaped like CDK output: the definition is an Fn::Join of strings, Ref and Fn::GetAtt. */
function template(definitionParts: unknown[], extra: Record<string, unknown> = {}): object {
  return {
    Parameters: { BootstrapVersion: { Type: 'AWS::SSM::Parameter::Value<String>', Default: '/cdk-bootstrap/hnb659fds/version' } },
    Resources: {
      WorkFnAB12CD34: { Type: 'AWS::Lambda::Function', Properties: {} },
      Bucket83908E77: { Type: 'AWS::S3::Bucket' },
      NamedBucket: { Type: 'AWS::S3::Bucket', Properties: { BucketName: 'my-literal-bucket' } },
      TableCD117FA1: { Type: 'AWS::DynamoDB::Table', Properties: {} },
      Queue: { Type: 'AWS::SQS::Queue' },
      Machine: {
        Type: 'AWS::StepFunctions::StateMachine',
        Properties: { DefinitionString: { 'Fn::Join': ['', definitionParts] }, ...extra },
      },
    },
  };
}

describe('resolveStateMachineDefinition', () => {
  it('resolves Fn::Join of Ref and Fn::GetAtt to local ARNs and names', () => {
    // Arrange
    const parts = [
      '{"StartAt":"Work","States":{"Work":{"Type":"Task","Resource":"',
      { 'Fn::GetAtt': ['WorkFnAB12CD34', 'Arn'] },
      '","Parameters":{"bucket":"',
      { Ref: 'Bucket83908E77' },
      '","bucketArn":"',
      { 'Fn::GetAtt': ['Bucket83908E77', 'Arn'] },
      '","named":"',
      { Ref: 'NamedBucket' },
      '","table":"',
      { Ref: 'TableCD117FA1' },
      '","tableArn":"',
      { 'Fn::GetAtt': ['TableCD117FA1', 'Arn'] },
      '","partition":"arn:',
      { Ref: 'AWS::Partition' },
      '","sub":"',
      { 'Fn::Sub': 'x-${AWS::Region}-${WorkFnAB12CD34.Arn}-${!Literal}' },
      '"},"End":true}}}',
    ];

    // Act
    const resolved = resolveStateMachineDefinition(template(parts), undefined, { tableNames: { TableCD117FA1: 'runs-table' } });

    // Assert
    const arn = 'arn:aws:lambda:local:000000000000:function:WorkFnAB12CD34';
    expect(resolved.stateMachineLogicalId).toBe('Machine');
    expect(resolved.definition.States.Work).toEqual({
      Type: 'Task',
      Resource: arn,
      Parameters: {
        bucket: 'bucket83908e77',
        bucketArn: 'arn:aws:s3:::bucket83908e77',
        named: 'my-literal-bucket',
        table: 'runs-table',
        tableArn: 'arn:aws:dynamodb:local:000000000000:table/runs-table',
        partition: 'arn:aws',
        sub: `x-local-${arn}-\${Literal}`,
      },
      End: true,
    });
    expect(resolved.lambdaArns).toEqual({ WorkFnAB12CD34: arn });
    expect(resolved.bucketNames).toEqual({ Bucket83908E77: 'bucket83908e77', NamedBucket: 'my-literal-bucket' });
    expect(resolved.tableNames).toEqual({ TableCD117FA1: 'runs-table' });
  });

  it('applies DefinitionSubstitutions', () => {
    // Arrange
    const parts = ['{"StartAt":"P","States":{"P":{"Type":"Pass","Result":"${greeting}","End":true}}}'];

    // Act
    const resolved = resolveStateMachineDefinition(template(parts, { DefinitionSubstitutions: { greeting: { Ref: 'Bucket83908E77' } } }));

    // Assert
    expect(resolved.definition.States.P.Result).toBe('bucket83908e77');
  });

  it('refuses a reference without a local value, naming it', () => {
    const parts = ['{"StartAt":"P","States":{"P":{"Type":"Pass","Result":"', { Ref: 'Queue' }, '","End":true}}}'];
    expect(() => resolveStateMachineDefinition(template(parts))).toThrow(ConfigurationError);
    expect(() => resolveStateMachineDefinition(template(parts))).toThrow(/Ref to Queue \(AWS::SQS::Queue\)/);
  });

  it('refuses an unknown logical id and an unsupported intrinsic function', () => {
    const unknown = ['{"StartAt":"P","States":{"P":{"Type":"Pass","Result":"', { 'Fn::GetAtt': ['Nope', 'Arn'] }, '","End":true}}}'];
    const unsupported = ['{"StartAt":"P","States":{"P":{"Type":"Pass","Result":"', { 'Fn::ImportValue': 'x' }, '","End":true}}}'];
    expect(() => resolveStateMachineDefinition(template(unknown))).toThrow(/unknown logical id 'Nope'/);
    expect(() => resolveStateMachineDefinition(template(unsupported))).toThrow(/Fn::ImportValue .* not supported/);
  });

  it('asks for a logical id when the template has several state machines, and checks the one given', () => {
    // Arrange
    const two = template(['{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}']) as { Resources: Record<string, unknown> };
    two.Resources.Other = { Type: 'AWS::StepFunctions::StateMachine', Properties: { DefinitionString: '{"StartAt":"Q","States":{"Q":{"Type":"Succeed"}}}' } };

    // Act / Assert
    expect(() => resolveStateMachineDefinition(two)).toThrow(/found 2 \(Machine, Other\)/);
    expect(resolveStateMachineDefinition(two, 'Other').definition.StartAt).toBe('Q');
    expect(() => resolveStateMachineDefinition(two, 'Bucket83908E77')).toThrow(ConfigurationError);
  });
});

describe('localizeDistributedMaps', () => {
  const distributed = (next: Record<string, unknown>): AslState => ({
    Type: 'Map',
    Comment: 'items',
    InputPath: '$.in',
    ResultPath: null,
    ResultSelector: { 'n.$': '$.MapRunArn' },
    OutputPath: '$',
    Retry: [{ ErrorEquals: ['States.ItemReaderFailed'], MaxAttempts: 1 }],
    Catch: [{ ErrorEquals: ['States.ALL'], Next: 'Failed' }],
    ItemSelector: { 'v.$': '$$.Map.Item.Value' },
    MaxConcurrency: 4,
    ItemProcessor: {
      ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' },
      StartAt: 'Inner',
      States: { Inner: { Type: 'Pass', End: true } },
    },
    ...next,
  });

  it('replaces a Distributed Map by a local Task of the same name, keeping its transitions and data fields', () => {
    // Arrange
    const definition: AslDefinition = {
      StartAt: 'Items',
      States: { Items: distributed({ Next: 'Done' }), Done: { Type: 'Succeed' }, Failed: { Type: 'Fail' } },
    };
    const before = JSON.stringify(definition);

    // Act
    const localized = localizeDistributedMaps(definition);

    // Assert
    expect(localized.definition.States.Items).toEqual({
      Type: 'Task',
      Resource: LOCAL_DISTRIBUTED_MAP_RESOURCE,
      Comment: 'items',
      InputPath: '$.in',
      ResultPath: null,
      ResultSelector: { 'n.$': '$.MapRunArn' },
      OutputPath: '$',
      Retry: [{ ErrorEquals: ['States.ItemReaderFailed'], MaxAttempts: 1 }],
      Catch: [{ ErrorEquals: ['States.ALL'], Next: 'Failed' }],
      Next: 'Done',
    });
    expect(localized.distributedMaps.Items).toMatchObject({ Type: 'Map', MaxConcurrency: 4, ItemSelector: { 'v.$': '$$.Map.Item.Value' } });
    expect(JSON.stringify(definition)).toBe(before); // the input is not modified
  });

  it('does not add ResultPath when the Map had none (absent means $, null discards)', () => {
    const definition: AslDefinition = { StartAt: 'Items', States: { Items: { ...distributed({ End: true }), ResultPath: undefined } } };
    delete definition.States.Items.ResultPath;
    const task = localizeDistributedMaps(definition).definition.States.Items;
    expect('ResultPath' in task).toBe(false);
    expect(task.End).toBe(true);
  });

  it('finds Distributed Maps inside Parallel branches and leaves inline Maps alone', () => {
    // Arrange
    const inline = { Type: 'Map', ItemProcessor: { ProcessorConfig: { Mode: 'INLINE' }, StartAt: 'I', States: { I: { Type: 'Pass', End: true } } }, End: true };
    const definition: AslDefinition = {
      StartAt: 'Both',
      States: {
        Both: {
          Type: 'Parallel',
          End: true,
          Branches: [
            { StartAt: 'Deep', States: { Deep: { ...distributed({ End: true }), Catch: undefined } } },
            { StartAt: 'Inline', States: { Inline: inline } },
          ],
        },
      },
    };

    // Act
    const localized = localizeDistributedMaps(definition);

    // Assert
    expect(localized.definition.States.Both).toEqual({ Type: 'Task', Resource: LOCAL_PARALLEL_RESOURCE, End: true });
    const branches = localized.parallels.Both.Branches;
    expect(branches[0].States.Deep.Resource).toBe(LOCAL_DISTRIBUTED_MAP_RESOURCE);
    expect(branches[1].States.Inline.Type).toBe('Map');
    expect(Object.keys(localized.distributedMaps)).toEqual(['Deep']);
  });

  it('refuses a definition where two states share a name (overrides are keyed by name)', () => {
    const definition: AslDefinition = {
      StartAt: 'Items',
      States: {
        Items: distributed({
          End: true,
          ItemProcessor: { ProcessorConfig: { Mode: 'DISTRIBUTED' }, StartAt: 'Items', States: { Items: { Type: 'Pass', End: true } } },
        }),
      },
    };
    expect(() => localizeDistributedMaps(definition)).toThrow(/'Items' is used more than once/);
  });
});

describe('Distributed Map rules', () => {
  it.each([
    // [threshold, failed, total, exceeded]
    [{}, 0, 10, false],
    [{}, 1, 10, true], // neither given: no failure tolerated
    [{ percentage: 10 }, 1, 10, false], // 10 % does not exceed 10 %
    [{ percentage: 10 }, 2, 10, true],
    [{ percentage: 0 }, 1, 1000, true],
    [{ percentage: 100 }, 10, 10, false],
    [{ count: 2 }, 2, 3, false],
    [{ count: 2 }, 3, 3, true],
    [{ count: 5, percentage: 10 }, 2, 10, true], // either threshold exceeded fails the Map Run
    [{ count: 1, percentage: 50 }, 2, 10, true],
  ])('threshold %j with %d of %d failed items: exceeded = %s', (threshold, failed, total, exceeded) => {
    expect(isThresholdExceeded(threshold, failed, total)).toBe(exceeded);
  });

  it('names the features that are not emulated locally', () => {
    const problems = unsupportedDistributedMapFeatures('M', {
      Type: 'Map',
      ItemProcessor: { StartAt: 'P', States: { P: { Type: 'Pass', End: true } } },
      ItemBatcher: { MaxItemsPerBatch: 10 },
      ItemReader: { Resource: 'arn:aws:states:::s3:getObject', ReaderConfig: { InputType: 'CSV' } },
      ResultWriter: { Resource: 'arn:aws:states:::s3:putObject', WriterConfig: { OutputType: 'JSONL' } },
    });
    expect(problems).toEqual([
      "Distributed Map 'M': ItemBatcher is not emulated locally",
      "Distributed Map 'M': ItemReader InputType CSV is not emulated locally (JSON and JSONL are)",
      "Distributed Map 'M': ResultWriter OutputType JSONL is not emulated locally",
    ]);
  });

  it('marks States.Runtime and States.DataLimitExceeded as terminal (neither retried nor caught)', () => {
    expect(new StatesError('States.Runtime', 'x')).toMatchObject({ name: 'States.Runtime', isRetryable: false, isCatchable: false });
    expect(new StatesError('States.DataLimitExceeded', 'x')).toMatchObject({ isRetryable: false, isCatchable: false });
    expect(new StatesError('States.ExceedToleratedFailureThreshold', 'x')).toMatchObject({ isRetryable: true, isCatchable: true });
  });
});
