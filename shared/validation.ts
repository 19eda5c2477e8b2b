/**
 * One way to say what a zod validation found, in one line: `path: message; path: message`, the
 * issues in zod's order. (zod's own `z.prettifyError` writes several lines per issue; every error of
 * the project is one line.)
 */
import type { z } from 'zod';

/**
 * @param fallback written as the path of an issue at the root (an empty path); default nothing.
 */
export function issuesText(error: z.ZodError, fallback = ''): string {
  return error.issues.map((issue) => `${issue.path.join('.') || fallback}: ${issue.message}`).join('; ');
}
