/**
 * One way to say what a zod validation found, in one line: `path: message; path: message`, the
 * issues in zod's order. (zod's own `z.prettifyError` writes several lines per issue; every error of
 * the project is one line.)
 */
import type { z } from 'zod';

/**
 * The text of one issue as the API and job files say it: a missing field is `required (<type>)`
 * (zod says "Invalid input: expected string, received undefined"), any other issue zod's message.
 */
export function issueDetail(issue: z.core.$ZodIssue): string {
  return issue.code === 'invalid_type' && issue.message.endsWith('received undefined') ? `required (${issue.expected})` : issue.message;
}

/**
 * @param fallback written as the path of an issue at the root (an empty path); default nothing.
 */
export function issuesText(error: z.ZodError, fallback = ''): string {
  return error.issues.map((issue) => `${issue.path.join('.') || fallback}: ${issue.message}`).join('; ');
}
