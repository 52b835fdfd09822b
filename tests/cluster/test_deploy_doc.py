"""The deployment's page (``docs/deploy.md``), checked statically: Docker can't run here.

Its settings table and its compose example name only settings the program reads, and every
setting it reads; the example's worker is the worker recipe's, and the replicas wait for the
migration.
"""

import re
from pathlib import Path
from typing import Any

import yaml

from artifactr.files.programs.settings import PREFIX, Deployment

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "deploy.md").read_text()
VARIABLES = {PREFIX + name.upper() for name in Deployment.model_fields}


def example() -> dict[str, Any]:
    found = re.search(r"```yaml\n(.*?)```", PAGE, re.DOTALL)
    assert found is not None
    return yaml.safe_load(found.group(1))


def test_the_settings_table_lists_every_setting_the_program_reads() -> None:
    listed = set(re.findall(r"^\| `(ARTIFACTR_FILES_\w+)`", PAGE, re.MULTILINE))
    assert listed == VARIABLES


def test_the_compose_example_sets_only_real_settings_and_migrates_before_the_replicas() -> None:
    services = example()["services"]
    settings = services["migrate"]["environment"]
    assert set(settings) <= VARIABLES
    assert services["server"]["environment"] == settings
    assert services["migrate"]["command"][-1] == "--migrate"
    assert services["server"]["deploy"]["replicas"] == 2
    waits = services["server"]["depends_on"]["migrate"]["condition"]
    assert waits == "service_completed_successfully"


def test_the_example_s_workers_are_the_worker_recipe_s() -> None:
    worker = example()["services"]["libreoffice-worker"]
    recipe = yaml.safe_load((ROOT / worker["extends"]["file"]).read_text())
    assert worker["extends"]["service"] in recipe["services"]
    assert worker["deploy"]["replicas"] == 2
    urls = example()["services"]["migrate"]["environment"]["ARTIFACTR_FILES_WORKER_URLS"]
    assert urls == "http://libreoffice-worker:8000"
