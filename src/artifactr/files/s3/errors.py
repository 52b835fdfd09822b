"""S3 errors: every way the object store fails, in words a deployer can act on (ADR-0024).

No client exception passes :class:`~artifactr.files.s3.S3Blobs`: each is one of these, chained
to the client's own with ``from``::

    Rejection                          (artifactr.core)
    ├── ServiceBusy                    (503 with Retry-After)
    │   └── StoreFailed                the object store could not do the call
    │       ├── StoreUnreachable       no answer: down, wrong endpoint, or the network
    │       ├── BucketMissing          the bucket does not exist
    │       ├── CredentialsRefused     the store refused the credentials or their rights
    │       └── StoreThrottled         503 SlowDown past every retry within the deadline
    └── NotFound
        └── BlobDamaged                stored bytes don't match their digest: never served
    ValueError
    └── InvalidStoreUrl                ``S3Blobs.from_url`` was given a URL it can't use
"""

from typing import ClassVar, Literal, override

from artifactr.core import NotFound
from pydantic import JsonValue

from artifactr.files.core.errors import ServiceBusy

StoreFailure = Literal[
    "unreachable", "bucket_missing", "credentials_refused", "throttled", "failed"
]
"""How the object store failed a call."""


class StoreFailed(ServiceBusy):
    """The object store could not do a call; ``failure`` says how, the message what to do."""

    code: ClassVar[str] = "store_failed"
    failure: ClassVar[StoreFailure] = "failed"

    def __init__(self, what: str, retry_after: int = 5) -> None:
        super().__init__(f"the object store failed: {what}", retry_after)
        self.what = what

    @override
    def details(self) -> dict[str, JsonValue]:
        """Return how the store failed, and the seconds to wait before trying again."""
        return {**super().details(), "failure": self.failure}


class StoreUnreachable(StoreFailed):
    """The store did not answer: it is down, the endpoint is wrong, or the network is."""

    failure: ClassVar[StoreFailure] = "unreachable"


class BucketMissing(StoreFailed):
    """The bucket does not exist: create it, or name the right one in the store's URL."""

    failure: ClassVar[StoreFailure] = "bucket_missing"


class CredentialsRefused(StoreFailed):
    """The store refused the credentials (unknown key, bad secret) or what they may do."""

    failure: ClassVar[StoreFailure] = "credentials_refused"


class StoreThrottled(StoreFailed):
    """The store kept answering 503 SlowDown past every retry within the call's deadline."""

    failure: ClassVar[StoreFailure] = "throttled"


class BlobDamaged(NotFound):
    """An object's bytes don't match the digest in its key: refused, never served."""

    def __init__(self, sha256: str) -> None:
        super().__init__("blob", sha256)
        self.sha256 = sha256


class InvalidStoreUrl(ValueError):
    """A store URL :meth:`~artifactr.files.s3.S3Blobs.from_url` can't use, and why."""

    def __init__(self, url: str, why: str) -> None:
        super().__init__(
            f"the store URL {url!r} is not usable: {why} "
            "(expected s3://bucket/prefix?endpoint_url=...&region=...)"
        )
        self.url = url
        self.why = why
