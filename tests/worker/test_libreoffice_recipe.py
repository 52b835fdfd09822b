"""The LibreOffice worker's recipe, read statically, as the WordCraft worker's is.

``worker/Dockerfile.libreoffice`` builds the same worker service with Debian's office, its
driver's Python and the rasteriser, from base images pinned by the same digests as
``worker/Dockerfile``'s, not as root, for a read-only root; compose's ``libreoffice-worker``
selects the app and is locked away like the WordCraft worker.
"""

import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKER = ROOT / "worker"
DOCKERFILE = (WORKER / "Dockerfile.libreoffice").read_text()
WORDCRAFT = (WORKER / "Dockerfile").read_text()
SERVICE: dict[str, Any] = yaml.safe_load((WORKER / "compose.yaml").read_text())["services"][
    "libreoffice-worker"
]


def stage(name: str) -> str:
    """Return one build stage's instructions."""
    for block in re.split(r"^(?=FROM )", DOCKERFILE, flags=re.M)[1:]:
        if block.startswith("FROM ") and re.match(rf"FROM \S+ AS {name}\b", block):
            return block
    raise AssertionError(f"no stage {name}")


def args(text: str) -> dict[str, str]:
    """Return a Dockerfile's ARG defaults."""
    return dict(re.findall(r"^ARG (\w+)=(\S+)$", text, flags=re.M))


def test_every_stage_starts_from_the_images_the_wordcraft_worker_pins() -> None:
    froms = re.findall(r"^FROM (\S+)", DOCKERFILE, flags=re.M)
    assert len(froms) == 3
    assert all(re.fullmatch(r"\$\{\w+_IMAGE\}@\$\{\w+_DIGEST\}", image) for image in froms)
    mine, theirs = args(DOCKERFILE), args(WORDCRAFT)
    assert set(mine) == {"PYTHON_IMAGE", "PYTHON_DIGEST", "UV_IMAGE", "UV_DIGEST"}
    assert all(mine[name] == theirs[name] for name in mine)


def test_the_worker_installs_the_office_its_driver_and_the_rasteriser_and_checks_them() -> None:
    worker = stage("worker")
    assert "apt-get install -y --no-install-recommends" in worker
    office = ("libreoffice-writer", "libreoffice-calc", "libreoffice-impress")
    for package in (*office, "python3-uno", "poppler-utils"):
        assert re.search(rf"\s{package}\s", worker), package
    assert "rm -rf /var/lib/apt/lists/*" in worker
    for check in ("/usr/bin/python3 -c 'import uno'", "soffice --version", "pdftoppm -v"):
        assert check in worker


def test_the_worker_runs_libreoffice_as_a_fixed_user_for_a_read_only_root() -> None:
    worker = stage("worker")
    for setting in (
        "WORKER_APP=libreoffice",
        "LIBREOFFICE_SOFFICE=/usr/bin/soffice",
        "LIBREOFFICE_PYTHON=/usr/bin/python3",
        "WORKER_TOKEN_FILE=/run/secrets/worker_token",
        "HOME=/tmp",
        "TMPDIR=/tmp",
    ):
        assert setting in worker
    assert "USER 10001:10001" in worker
    assert re.search(r"^USER (0|root)", DOCKERFILE, flags=re.M) is None
    assert "VOLUME" not in DOCKERFILE
    assert 'ENTRYPOINT ["python", "-m", "artifactr_files_worker"]' in worker


def test_the_python_side_is_the_locked_worker_extra_and_the_files_it_copies_exist() -> None:
    assert "uv sync --locked --no-dev --extra worker --no-editable" in stage("builder")
    for source in re.findall(r"^COPY (?!--from)(.+) \S+$", DOCKERFILE, flags=re.M):
        for path in source.split():
            assert (ROOT / path).exists(), path


def test_the_compose_service_selects_libreoffice_on_the_internal_network() -> None:
    assert SERVICE["build"] == {
        "context": "..",
        "dockerfile": "worker/Dockerfile.libreoffice",
        "target": "worker",
    }
    assert SERVICE["environment"]["WORKER_APP"] == "libreoffice"
    assert SERVICE["environment"]["WORKER_TOKEN_FILE"] == "/run/secrets/worker_token"
    assert SERVICE["networks"] == ["native_files"]
    assert SERVICE["secrets"] == ["worker_token"]
    assert SERVICE["ulimits"]["core"] == 0
