/** Lambda handler: finalize (placeholder until the use case lands; see docs/ARCHITECTURE.md). */
export async function handler(event: unknown): Promise<unknown> {
  throw new Error('not implemented: finalize ' + JSON.stringify(event));
}
