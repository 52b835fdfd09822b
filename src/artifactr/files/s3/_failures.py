"""Failures: the client's exceptions turned into :mod:`artifactr.files.s3.errors` (ADR-0024).

obstore raises its own types for some answers (403, 412) and a generic error with the store's
reply for the rest; :func:`translated` reads both and raises the typed failure in its place.
"""

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

from obstore.exceptions import BaseError, PermissionDeniedError, UnauthenticatedError

from artifactr.files.s3.errors import (
    BucketMissing,
    CredentialsRefused,
    StoreFailed,
    StoreThrottled,
    StoreUnreachable,
)


def failure(error: Exception, bucket: str) -> StoreFailed:
    """Return the typed failure a client error means."""
    said = str(error)
    if "NoSuchBucket" in said:
        return BucketMissing(f"the bucket {bucket!r} does not exist: create it, or fix the URL")
    if isinstance(error, PermissionDeniedError | UnauthenticatedError) or any(
        status in said for status in ("403 Forbidden", "401 Unauthorized")
    ):
        return CredentialsRefused(
            f"it refused the credentials for bucket {bucket!r}: check AWS_ACCESS_KEY_ID, "
            "AWS_SECRET_ACCESS_KEY and what the key may do"
        )
    if "SlowDown" in said or "503 Service Unavailable" in said:
        return StoreThrottled("it kept asking to slow down (503 SlowDown) past every retry")
    if "error sending request" in said or "timed out" in said or "onnection" in said:
        return StoreUnreachable(
            "it did not answer: check that it runs and that the endpoint URL is right"
        )
    return StoreFailed(said.split("\n", 1)[0])


@asynccontextmanager
async def translated(bucket: str) -> AsyncGenerator[None]:
    """Raise each client error of the block as the typed failure it means."""
    try:
        yield
    except (BaseError, FileNotFoundError) as error:
        raise failure(error, bucket) from error


def object_missing(error: FileNotFoundError, bucket: str) -> None:
    """Raise the typed failure if a "not found" means the bucket, not the object."""
    if "NoSuchBucket" in str(error):
        raise failure(error, bucket) from error
