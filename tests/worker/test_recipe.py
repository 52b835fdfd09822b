"""The container recipe, read statically: no Docker engine runs here, so the files are checked.

The Dockerfile builds a thin worker from the release's checked tarball, not as root, for a
read-only root, with no fonts and WordCraft's notices; the compose recipe is off by default and
locks the worker away; and the pin check catches any drift between the worker's and the
editor's WordCraft pins, on copies of the files.
"""

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from scripts import check_pins

ROOT = Path(__file__).resolve().parents[2]
WORKER = ROOT / "worker"
DOCKERFILE = (WORKER / "Dockerfile").read_text()
COMPOSE: dict[str, Any] = yaml.safe_load((WORKER / "compose.yaml").read_text())
SERVICES: dict[str, Any] = COMPOSE["services"]


def stages() -> dict[str, str]:
    """Return each build stage's instructions, by its name."""
    found: dict[str, str] = {}
    for block in re.split(r"^(?=FROM )", DOCKERFILE, flags=re.M)[1:]:
        name = re.match(r"FROM \S+ AS (\S+)", block)
        assert name is not None, block.splitlines()[0]
        found[name.group(1)] = block
    return found


# ─── the Dockerfile ───────────────────────────────────────────────────────────


def test_every_stage_starts_from_an_image_pinned_by_digest() -> None:
    froms = re.findall(r"^FROM (\S+)", DOCKERFILE, flags=re.M)
    assert froms
    assert all(re.fullmatch(r"\$\{\w+_IMAGE\}@\$\{\w+_DIGEST\}", image) for image in froms)
    assert "ARG PYTHON_IMAGE=python:3.12-slim-bookworm" in DOCKERFILE


def test_the_cli_comes_from_the_release_tarball_checked_against_its_sums() -> None:
    release = stages()["release"]
    assert "/SHA256SUMS.txt" in release
    assert "wordcraft-${WORDCRAFT_VERSION}-linux-${WORDCRAFT_ARCH}.tar.gz" in release
    checks = re.findall(r"sha256sum -c -", release)
    assert len(checks) == 3
    assert 'echo "${WORDCRAFT_SUMS_SHA256}  SHA256SUMS.txt"' in release
    assert 'echo "${WORDCRAFT_SHA256}  ${tarball}"' in release
    assert '"${unpacked}/bin/wordcraft-cli"' in release
    assert 'unpacked="wordcraft-${WORDCRAFT_VERSION}-linux-${WORDCRAFT_ARCH}"' in release


def test_the_licence_files_and_notice_come_from_the_tarball_into_both_images() -> None:
    release = stages()["release"]
    assert "for name in LICENSE-MIT LICENSE-APACHE NOTICE" in release
    assert "exit 1" in release
    for image in ("worker", "editor"):
        assert "COPY --from=release /out/licenses/ /usr/share/licenses/" in stages()[image]
    assert "COPY --from=release /out/licenses/wordcraft/ /out/editor/" in stages()["web"]


@pytest.mark.parametrize(("image", "uid"), [("worker", 10001), ("editor", 10002)])
def test_each_image_runs_as_a_fixed_user_for_a_read_only_root_with_no_fonts(
    image: str, uid: int
) -> None:
    stage = stages()[image]
    assert f"USER {uid}:{uid}" in stage
    assert re.search(r"^USER (0|root)", DOCKERFILE, flags=re.M) is None
    assert "TMPDIR=/tmp" in stage
    assert "HOME=/tmp" in stage
    assert "PYTHONDONTWRITEBYTECODE=1" in stage
    assert "apt-get" not in DOCKERFILE
    assert "fonts-" not in DOCKERFILE
    assert "VOLUME" not in DOCKERFILE


def test_the_worker_image_refuses_to_build_with_a_font() -> None:
    worker = stages()["worker"]
    assert "-iname '*.ttf'" in worker
    assert 'test -z "${fonts}"' in worker


def test_the_python_side_is_the_locked_worker_extra_and_the_files_it_copies_exist() -> None:
    builder = stages()["builder"]
    assert "uv sync --locked --no-dev --extra worker --no-editable" in builder
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert "worker" in extras
    for source in re.findall(r"^COPY (?!--from)(.+) \S+$", DOCKERFILE, flags=re.M):
        for path in source.split():
            assert (ROOT / path).exists(), path


def test_the_entry_points_are_the_worker_package_and_its_editor() -> None:
    assert 'ENTRYPOINT ["python", "-m", "artifactr_files_worker"]' in stages()["worker"]
    assert 'ENTRYPOINT ["python", "-m", "artifactr_files_worker.editor"]' in stages()["editor"]
    assert (WORKER / "artifactr_files_worker" / "__main__.py").exists()
    assert (WORKER / "artifactr_files_worker" / "editor.py").exists()
    assert "WORDCRAFT_CLI=/opt/wordcraft/bin/wordcraft-cli" in stages()["worker"]
    assert "WORKER_TOKEN_FILE=/run/secrets/worker_token" in stages()["worker"]


# ─── the compose recipe ───────────────────────────────────────────────────────


def test_the_recipe_is_off_by_default() -> None:
    assert set(SERVICES) == {"wordcraft-worker", "wordcraft-editor", "libreoffice-worker"}
    assert SERVICES["libreoffice-worker"]["profiles"] == ["libreoffice"]
    assert all(
        service["profiles"] == ["native_files"]
        for name, service in SERVICES.items()
        if name != "libreoffice-worker"
    )


@pytest.mark.parametrize("name", ["wordcraft-worker", "wordcraft-editor", "libreoffice-worker"])
def test_each_service_is_locked_down(name: str) -> None:
    service = SERVICES[name]
    assert "ports" not in service
    assert "privileged" not in service
    assert "network_mode" not in service
    assert service["cap_drop"] == ["ALL"]
    assert "cap_add" not in service
    assert service["security_opt"] == ["no-new-privileges:true"]
    assert service["read_only"] is True
    (tmp,) = service["tmpfs"]
    assert re.fullmatch(r"/tmp:size=\d+[mg],mode=1777,noexec,nosuid,nodev", tmp)
    assert service["mem_limit"] == service["memswap_limit"]
    assert 0 < float(service["cpus"]) <= 1
    assert 0 < service["pids_limit"] <= 128
    assert not service["user"].startswith(("0:", "root"))
    assert service["build"]["dockerfile"] in {"worker/Dockerfile", "worker/Dockerfile.libreoffice"}
    assert (WORKER / service["build"]["context"] / service["build"]["dockerfile"]).exists()


def test_the_worker_sits_on_an_internal_network_with_its_token_from_a_secret() -> None:
    worker = SERVICES["wordcraft-worker"]
    assert worker["networks"] == ["native_files"]
    assert COMPOSE["networks"]["native_files"] == {"internal": True}
    assert worker["secrets"] == ["worker_token"]
    assert "file" in COMPOSE["secrets"]["worker_token"]
    assert worker["environment"]["WORKER_TOKEN_FILE"] == "/run/secrets/worker_token"
    assert "WORKER_TOKEN" not in worker["environment"]
    assert worker["build"]["target"] == "worker"
    assert "args" not in worker["build"]


def test_the_editor_is_served_from_the_same_release_on_an_internal_network() -> None:
    editor = SERVICES["wordcraft-editor"]
    assert editor["build"]["target"] == "editor"
    assert set(editor["build"]["args"]) == {
        "WORDCRAFT_VERSION",
        "WORDCRAFT_SUMS_SHA256",
        "WORDCRAFT_WEB_SHA256",
    }
    assert editor["networks"] == ["editor"]
    assert COMPOSE["networks"]["editor"] == {"internal": True}
    assert "wordcraft-web-${WORDCRAFT_VERSION}.zip" in stages()["web"]


def test_the_pin_check_reads_the_compose_file_as_yaml_does() -> None:
    pins = check_pins.check(ROOT)
    from_yaml = {
        name: {
            arg: str(value)
            for arg, value in service["build"].get("args", {}).items()
            if arg.startswith("WORDCRAFT_")
        }
        for name, service in SERVICES.items()
    }
    assert pins.services == {name: args for name, args in from_yaml.items() if args}


# ─── the pin check ────────────────────────────────────────────────────────────

REAL = "ab" * 32
"""A digest that is not a placeholder."""


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A copy of the recipe's files, to break."""
    (tmp_path / "worker").mkdir()
    for name in ("Dockerfile", "compose.yaml", "pins.toml"):
        shutil.copy(WORKER / name, tmp_path / "worker" / name)
    return tmp_path


def edit(root: Path, name: str, old: str, new: str, count: int = 1) -> None:
    path = root / "worker" / name
    text = path.read_text()
    assert text.count(old) >= count, old
    path.write_text(text.replace(old, new, count))


def problems(root: Path, *flags: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    status = check_pins.main(["--root", str(root), *flags])
    said = capsys.readouterr().err.splitlines()
    assert (status == 0) == (said == [])
    return said


def test_the_repositorys_pins_agree_as_the_test_command_runs_the_check() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "check_pins.py")],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "pin WordCraft 0.7.0 alike" in done.stdout


def test_a_version_that_differs_between_the_worker_and_the_editor_fails(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit(copy, "compose.yaml", 'WORDCRAFT_VERSION: "0.7.0"', 'WORDCRAFT_VERSION: "0.7.1"')
    assert problems(copy, capsys=capsys) == [
        "check_pins: the editor's pin (compose.yaml): WORDCRAFT_VERSION is 0.7.1, "
        "not the release's 0.7.0",
        "check_pins: the worker's and the editor's WORDCRAFT_VERSION differ: 0.7.0 and 0.7.1",
        "check_pins: compose.yaml: wordcraft-editor's WORDCRAFT_VERSION is 0.7.1, "
        "not the release's 0.7.0",
    ]


def test_sums_that_differ_between_the_worker_and_the_editor_fail(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit(
        copy,
        "Dockerfile",
        "ARG WORDCRAFT_SUMS_SHA256=" + "0" * 64,
        f"ARG WORDCRAFT_SUMS_SHA256={REAL}",
    )
    said = problems(copy, capsys=capsys)
    differ = "check_pins: the worker's and the editor's WORDCRAFT_SUMS_SHA256 differ"
    assert f"{differ}: {REAL} and {'0' * 64}" in said


def test_a_checksum_that_differs_from_the_release_fails(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit(
        copy,
        "compose.yaml",
        f'WORDCRAFT_WEB_SHA256: "{"0" * 64}"',
        f'WORDCRAFT_WEB_SHA256: "{REAL}"',
    )
    said = problems(copy, capsys=capsys)
    assert said[0] == (
        f"check_pins: the editor's pin (compose.yaml): WORDCRAFT_WEB_SHA256 is {REAL}, "
        f"not the release's {'0' * 64}"
    )


@pytest.mark.parametrize(
    ("name", "old", "new", "said"),
    [
        (
            "Dockerfile",
            "ARG WORDCRAFT_SHA256=" + "0" * 64,
            "ARG WORDCRAFT_SHA256",
            "the worker's pin (Dockerfile): WORDCRAFT_SHA256 is missing",
        ),
        (
            "compose.yaml",
            f'        WORDCRAFT_SUMS_SHA256: "{"0" * 64}"\n',
            "",
            "the editor's pin (compose.yaml): WORDCRAFT_SUMS_SHA256 is missing",
        ),
        (
            "compose.yaml",
            f'        WORDCRAFT_WEB_SHA256: "{"0" * 64}"\n',
            "",
            "the editor's pin (compose.yaml): WORDCRAFT_VERSION is missing",
        ),
        (
            "pins.toml",
            'version = "0.7.0"',
            'version = "latest"',
            "pins.toml: the release's version is missing or not x.y.z",
        ),
        (
            "pins.toml",
            '"wordcraft-web-0.7.0.zip" = ',
            '"wordcraft-web-0.7.1.zip" = ',
            "pins.toml's WORDCRAFT_WEB_SHA256 is missing or not 64 hex digits: ''",
        ),
        (
            "pins.toml",
            "[wordcraft]",
            "[wordcraft",
            "pins.toml: can't be read",
        ),
        (
            "Dockerfile",
            "ARG WORDCRAFT_SHA256=" + "0" * 64,
            "ARG WORDCRAFT_SHA256=" + "0" * 63,
            "the worker's pin (Dockerfile): WORDCRAFT_SHA256 is missing or not 64 hex digits",
        ),
        (
            "Dockerfile",
            "ARG UV_DIGEST=sha256:",
            "ARG UV_DIGEST=md5:",
            "Dockerfile: UV_DIGEST is not a sha256: digest",
        ),
        (
            "Dockerfile",
            "ARG WORDCRAFT_ARCH=x86_64\n",
            "ARG WORDCRAFT_ARCH=x86_64\nARG WORDCRAFT_VERSION=0.6.0\n",
            "Dockerfile: WORDCRAFT_VERSION is set twice, to 0.7.0 and 0.6.0",
        ),
    ],
    ids=[
        "the worker's tarball pin",
        "the editor's sums pin",
        "the editor's whole pin",
        "the release's version",
        "the release's web asset",
        "an unreadable record",
        "a short digest",
        "a base image digest",
        "a pin set twice",
    ],
)
def test_a_missing_or_malformed_pin_fails(
    copy: Path, capsys: pytest.CaptureFixture[str], name: str, old: str, new: str, said: str
) -> None:
    edit(copy, name, old, new)
    assert any(
        problem.startswith(f"check_pins: {said}") for problem in problems(copy, capsys=capsys)
    )


def test_strict_refuses_placeholders_and_passes_real_digests(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    said = problems(copy, "--strict", capsys=capsys)
    assert "check_pins: Dockerfile: PYTHON_DIGEST is a placeholder" in said
    assert "check_pins: pins.toml's WORDCRAFT_SHA256 is a placeholder" in said
    for name in ("Dockerfile", "compose.yaml", "pins.toml"):
        path = copy / "worker" / name
        path.write_text(path.read_text().replace("0" * 64, REAL))
    assert check_pins.main(["--root", str(copy), "--strict"]) == 0
    assert (
        capsys.readouterr().out
        == "check_pins: the worker and the editor pin WordCraft 0.7.0 alike\n"
    )
