/**
 * The S3 "Object Created" event as EventBridge delivers it (bucket notifications to EventBridge),
 * validated at the handler boundary. Only the fields the triggers use are checked; others pass.
 *
 * Shape (abridged): `{"source": "aws.s3", "detail-type": "Object Created", "detail": {"bucket":
 * {"name"}, "object": {"key", "size", "etag", "version-id"?, "sequencer"}, "reason": "PutObject"}}`.
 * Source: https://docs.aws.amazon.com/AmazonS3/latest/userguide/ev-events.html
 */
import { z } from 'zod';
import { parseEvent } from './state';

export const S3ObjectCreatedEventSchema = z.object({
  source: z.literal('aws.s3'),
  'detail-type': z.literal('Object Created'),
  detail: z.object({
    bucket: z.object({ name: z.string().min(1) }),
    object: z.object({
      key: z.string().min(1),
      size: z.number().int().min(0).optional(),
      etag: z.string().optional(),
      'version-id': z.string().optional(),
    }),
  }),
});

/** The created object an event names. */
export interface CreatedObject {
  bucket: string;
  key: string;
  /** ETag without surrounding quotes, when the event has one. */
  etag?: string;
  versionId?: string;
}

/**
 * Validate an Object Created event and return its object.
 * @throws InvalidInputError naming every invalid field.
 */
export function createdObjectOf(event: unknown): CreatedObject {
  const parsed = parseEvent(S3ObjectCreatedEventSchema, event, 'S3 Object Created');
  const { bucket, object } = parsed.detail;
  return {
    bucket: bucket.name,
    key: object.key,
    ...(object.etag !== undefined && { etag: object.etag.replace(/^"|"$/g, '') }),
    ...(object['version-id'] !== undefined && { versionId: object['version-id'] }),
  };
}
