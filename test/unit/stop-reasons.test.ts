import { converseStopReason } from '../../models/bedrock/bedrock';
import { stopReasonOf } from '../../models/openai/openai';
import { STOP_REASONS } from '../../shared/ports';

describe("stop reasons: each provider's values mapped once onto the port's closed vocabulary", () => {
  it.each([
    ['end_turn', false, { stopReason: 'end_turn' }],
    ['max_tokens', false, { stopReason: 'max_tokens' }],
    ['stop_sequence', false, { stopReason: 'stop_sequence' }],
    ['tool_use', true, { stopReason: 'end_turn' }],
    ['tool_use', false, { stopReason: 'other', providerStopReason: 'tool_use' }],
    ['guardrail_intervened', false, { stopReason: 'content_filtered' }],
    ['content_filtered', false, { stopReason: 'content_filtered' }],
    ['unknown', false, { stopReason: 'other', providerStopReason: 'unknown' }],
  ])('Bedrock Converse %j (tool reply %j) -> %j', (value, tool, expected) => {
    expect(converseStopReason(value, tool)).toEqual(expected);
  });

  it.each([
    ['stop', { stopReason: 'end_turn' }],
    ['length', { stopReason: 'max_tokens' }],
    ['content_filter', { stopReason: 'content_filtered' }],
    ['tool_calls', { stopReason: 'other', providerStopReason: 'tool_calls' }],
    [null, { stopReason: 'other', providerStopReason: 'unknown' }],
  ])('OpenAI finish_reason %j -> %j', (value, expected) => {
    expect(stopReasonOf(value)).toEqual(expected);
  });

  it('maps every value into the vocabulary', () => {
    const all = [
      ...['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'guardrail_intervened', 'x'].map((v) => converseStopReason(v, true).stopReason),
      ...['stop', 'length', 'content_filter', 'x'].map((v) => stopReasonOf(v).stopReason),
    ];

    for (const reason of all) expect(STOP_REASONS).toContain(reason);
  });
});
