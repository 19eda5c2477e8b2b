/**
 * node-llama-cpp's dialect of JSON Schema, owned by the llama provider: the reply schemas of
 * shared/llm/schemas.ts as its JSON-schema grammar (`createGrammarForJsonSchema`) accepts them.
 */
import { MAX_UNITS } from '../../shared/llm/sentences';
import type { JsonSchema } from '../../shared/llm/schemas';

/**
 * The schema in the form node-llama-cpp's JSON-schema grammar accepts (its `GbnfJsonSchema`):
 * an integer range of at most `MAX_UNITS` + 1 values (the sentence ids of a chunk) becomes an `enum` of those integers (the grammar has
 * no `minimum`/`maximum`, and an unbounded integer could run on), `required` is dropped (the
 * grammar makes every property required), everything else is kept.
 */
export function toGrammarSchema(schema: JsonSchema): Record<string, unknown> {
  const { required: _required, minimum, maximum, ...rest } = schema;
  void _required;
  if ((rest.type === 'integer' || rest.type === 'number') && minimum !== undefined && maximum !== undefined && maximum - minimum <= MAX_UNITS && !rest.enum) {
    const values: number[] = [];
    for (let v = Math.ceil(minimum); v <= maximum; v++) values.push(v);
    const { type: _type, ...others } = rest;
    void _type;
    return { ...others, enum: values };
  }
  const out: Record<string, unknown> = { ...rest };
  if (rest.properties) out.properties = Object.fromEntries(Object.entries(rest.properties).map(([key, value]) => [key, toGrammarSchema(value)]));
  if (rest.items) out.items = toGrammarSchema(rest.items);
  return out;
}
