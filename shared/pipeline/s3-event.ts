/**
 * The S3 "Object Created" event as EventBridge delivers it (bucket notifications to EventBridge),
 * validated at the handler boundary. Only the fields the triggers use are checked; others pass.
 *
 * Shape (abridged): `{"source": "aws.s3", "detail-type": "Object Created", "detail": {"bucket":
 * {"name"}, "object": {"key", "size", "etag", "version-id"?, "sequencer"}, "reason": "PutObject"}}`.
 * Source: https://docs.aws.amazon.com/AmazonS3/latest/userguide/ev-events.html
 *
 * Not Powertools parser's `S3EventNotificationEventBridgeSchema`: it also requires fields the
 * triggers never read (`request-id`, `requester`, an ISO `time`) and accepts only an IPv4
 * `source-ip-address`, so an upload over S3's dual-stack (IPv6) endpoints would be refused
 * (docs/ARCHITECTURE.md, "Powertools for AWS Lambda").
 */
import { z } from 'zod';
import { InvalidInputError } from '../errors';
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
 * The object key an S3 event names, decoded. S3 event notifications URL-encode the key with `+` for
 * a space ("red flower.jpg" arrives as `red+flower.jpg`, `a+b.txt` as `a%2Bb.txt`, `é` as `%C3%A9`):
 * `+` becomes a space, then `%XX` sequences are decoded as UTF-8. Every key taken from an event
 * goes through here before it reads or names an object. Hand-written: two calls, and
 * `decodeURIComponent` alone would keep the `+`.
 * Source: "Event message structure", Amazon S3 User Guide
 * (https://docs.aws.amazon.com/AmazonS3/latest/userguide/notification-content-structure.html).
 * @throws InvalidInputError for a key with a malformed `%` sequence (not URL-encoded UTF-8).
 */
export function decodeS3EventKey(key: string): string {
  try {
    return decodeURIComponent(key.replace(/\+/g, ' '));
  } catch (error) {
    throw new InvalidInputError(`The S3 event's object key ${JSON.stringify(key)} is not URL-encoded UTF-8 (a malformed % sequence)`, { cause: error });
  }
}

/**
 * Validate an Object Created event and return its object, the key decoded ({@link decodeS3EventKey}).
 * @throws InvalidInputError naming every invalid field, or a key that does not decode.
 */
export function createdObjectOf(event: unknown): CreatedObject {
  const parsed = parseEvent(S3ObjectCreatedEventSchema, event, 'S3 Object Created');
  const { bucket, object } = parsed.detail;
  return {
    bucket: bucket.name,
    key: decodeS3EventKey(object.key),
    ...(object.etag !== undefined && { etag: object.etag.replace(/^"|"$/g, '') }),
    ...(object['version-id'] !== undefined && { versionId: object['version-id'] }),
  };
}
