"""``kto`` installs for a user as the install page says, with pipx from a wheel, into a virtual environment of its
own, and works there: not only in the repository's editable install, where a file the wheel leaves out (the
CRDs, the demo's manifests) would still be found beside the source.

The wheel is built here from the source as it is, and installed, with no index: both take only the wheelhouse
that ``make dist`` keeps in ``dist/wheels`` (the dependencies, pip, setuptools and wheel), so the test reaches
nothing beyond this machine. Without that wheelhouse (a bare clone's ``pytest``) it skips; ``make test`` builds it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
WHEELHOUSE = REPO / "dist" / "wheels"
SOURCE = ("pyproject.toml", "README.md", "operator", "manifests/examples")
"""What building the wheel reads: the project, its README (the long description) and the examples that
``topic_operator/examples`` links to."""

pytestmark = [pytest.mark.timeout(300), pytest.mark.zookeeper]  # the demo starts Debian's ZooKeeper


@dataclass(frozen=True)
class UserInstall:
    kto: Path
    environment: dict[str, str]
    home: Path

    def run(self, *arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.kto), *arguments],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            cwd=cwd,
            env=self.environment,
        )


def _offline_pip(home: Path) -> dict[str, str]:
    """A user's environment with pip told to take wheels from the wheelhouse only: no index, and none of this
    machine's pip configuration files."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(WHEELHOUSE),
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIPX_HOME": str(home / "pipx"),
        "PIPX_BIN_DIR": str(home / "bin"),
        "PIPX_MAN_DIR": str(home / "man"),
    }


def _checked(command: list[str], env: dict[str, str]) -> None:
    completed = subprocess.run(command, capture_output=True, text=True, timeout=240, check=False, env=env)
    assert completed.returncode == 0, f"{' '.join(command)}:\n{completed.stdout}{completed.stderr}"


@pytest.fixture(scope="module")
def user_install(tmp_path_factory: pytest.TempPathFactory) -> UserInstall:
    if not WHEELHOUSE.is_dir():
        pytest.skip(f"no wheelhouse at {WHEELHOUSE.relative_to(REPO)}: `make dist` builds it")
    root = tmp_path_factory.mktemp("user-install")
    source = root / "source"
    for name in SOURCE:
        if (REPO / name).is_dir():
            shutil.copytree(
                REPO / name,
                source / name,
                symlinks=True,
                ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
            )
        else:
            source.mkdir(exist_ok=True)
            shutil.copyfile(REPO / name, source / name)
    home = root / "home"
    environment = _offline_pip(home)
    _checked(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(root / "dist"), str(source)],
        env={**environment, "PATH": os.environ["PATH"]},
    )
    (wheel,) = (root / "dist").glob("kafka_topic_operator-*.whl")
    python = getattr(sys, "_base_executable", sys.executable)  # not this venv: a user's own Python
    _checked([sys.executable, "-m", "pipx", "install", "--python", python, str(wheel)], env=environment)
    return UserInstall(home / "bin" / "kto", {"PATH": environment["PATH"], "HOME": str(home)}, home)


def test_the_installed_kto_is_the_projects_release_in_an_environment_of_its_own(
    user_install: UserInstall,
) -> None:
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    completed = user_install.run("--version", cwd=user_install.home)
    assert (completed.returncode, completed.stdout) == (0, f"kto {version}\n"), completed.stderr
    interpreter = user_install.kto.read_text().splitlines()[0].removeprefix("#!")
    assert Path(interpreter).is_relative_to(user_install.home / "pipx" / "venvs" / "kafka-topic-operator")


def test_the_install_page_names_the_wheel_make_dist_builds() -> None:
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    page = (REPO / "docs" / "getting-started" / "setup.md").read_text()
    named = set(re.findall(r"kafka_topic_operator-[^ ]+\.whl", page))
    assert named == {f"kafka_topic_operator-{version}-py3-none-any.whl"}
    assert f"PIP_NO_INDEX=1 PIP_FIND_LINKS={WHEELHOUSE.relative_to(REPO)} pipx install" in page


def test_the_installed_kto_validates_with_the_crds_it_carries(
    user_install: UserInstall, tmp_path: Path
) -> None:
    """``validate`` checks manifests against the CRDs' schemas, which must travel in the wheel."""
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    shutil.copyfile(REPO / "manifests" / "examples" / "payments.yaml", good)
    bad.write_text(good.read_text().replace("  partitions: 12\n", "  partitions: 12\n  colour: blue\n", 1))
    assert bad.read_text() != good.read_text()
    accepted = user_install.run("validate", good.name, cwd=tmp_path)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    refused = user_install.run("validate", bad.name, cwd=tmp_path)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "spec.colour = 'blue': unknown field" in refused.stdout  # the schema's fields, from the CRD
    assert "Traceback" not in refused.stdout + refused.stderr


def test_the_installed_kto_runs_its_demo_with_the_manifests_it_carries(user_install: UserInstall) -> None:
    """Run from a directory with no ``manifests/`` in it, as a user's is."""
    completed = user_install.run("demo", cwd=user_install.home)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "  payments.transactions: applied" in completed.stdout
    assert completed.stdout.rstrip().endswith("stopped ZooKeeper and removed its data; demo finished")
