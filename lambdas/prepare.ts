/** Lambda handler: prepare (placeholder until the use case lands; see docs/ARCHITECTURE.md). */
export async function handler(event: unknown): Promise<unknown> {
  throw new Error('not implemented: prepare ' + JSON.stringify(event));
}
