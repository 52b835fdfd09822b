"""S3 state: native files' bytes in any S3-compatible object store (ADR-0024).

Needs the ``s3`` extra (obstore). Build the blobs from the store's URL; credentials come from the
standard environment (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``) or
the machine's role::

    from artifactr.files.s3 import S3Blobs

    blobs = S3Blobs.from_url(
        "s3://bucket/files?endpoint_url=http://127.0.0.1:8333&region=us-east-1"
    )
    files = NativeFiles(blobs=blobs, leases=leases, checkouts=checkouts, renders=renders, app=app)

Keys start with tenant, workspace and artifact, then the digest. Every failure of the store is a
typed :class:`~artifactr.files.s3.errors.StoreFailed` (a ``ServiceBusy``: 503, try again).
"""

from artifactr.files.s3.blobs import S3Blobs
from artifactr.files.s3.errors import (
    BlobDamaged,
    BucketMissing,
    CredentialsRefused,
    InvalidStoreUrl,
    StoreFailed,
    StoreThrottled,
    StoreUnreachable,
)

__all__ = [
    "BlobDamaged",
    "BucketMissing",
    "CredentialsRefused",
    "InvalidStoreUrl",
    "S3Blobs",
    "StoreFailed",
    "StoreThrottled",
    "StoreUnreachable",
]
