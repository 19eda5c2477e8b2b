/**
 * Bucket grants with explicit action lists, in place of the CDK bucket grants (`grantRead`,
 * `grantPut`), whose action groups (`s3:GetObject*`, `s3:GetBucket*`, `s3:List*`, `s3:Abort*`) also
 * allow S3 Access Grants, access point and object-lock operations the functions never call
 * (parliament RESOURCE_MISMATCH; docs/DEPLOY-CHECKS.md). The functions' S3 calls are GetObject,
 * HeadObject, ListObjectsV2, PutObject and CopyObject (lambdas/adapters/s3-blob-store.ts, the
 * presigned PUT of lambdas/adapters/s3-presigner.ts).
 * Source: https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazons3.html
 */
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';

/**
 * Read objects whose keys match `keyPattern` (`runs/*`; `*` = every key): `s3:GetObject` (GET, HEAD
 * and the source of a CopyObject) on those objects and `s3:ListBucket` on the bucket (ListObjectsV2;
 * without it S3 answers a GET or HEAD of a missing key with 403 instead of 404, which the blob store
 * reads as "absent").
 */
export function grantObjectRead(bucket: s3.IBucket, grantee: iam.IGrantable, keyPattern = '*'): iam.Grant {
  iam.Grant.addToPrincipal({ grantee, actions: ['s3:ListBucket'], resourceArns: [bucket.bucketArn] });
  return iam.Grant.addToPrincipal({ grantee, actions: ['s3:GetObject'], resourceArns: [bucket.arnForObjects(keyPattern)] });
}

/** Write objects whose keys match `keyPattern`: `s3:PutObject` (PUT, a presigned PUT, the target of a CopyObject). */
export function grantObjectWrite(bucket: s3.IBucket, grantee: iam.IGrantable, keyPattern: string): iam.Grant {
  return iam.Grant.addToPrincipal({ grantee, actions: ['s3:PutObject'], resourceArns: [bucket.arnForObjects(keyPattern)] });
}
