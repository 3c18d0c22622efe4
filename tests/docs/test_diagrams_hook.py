"""The site's pictures are rendered by Graphviz at build time, and a picture that cannot be rendered fails the
build naming its source file and dot's own message."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import Files

REPOSITORY = Path(__file__).resolve().parents[2]
HOOK_PATH = REPOSITORY / "tools" / "mkdocs_hooks" / "diagrams.py"

# No skip without Graphviz: the site cannot be built without it, so its absence is a failure here too.
pytestmark = pytest.mark.timeout(60)

A_PICTURE = 'digraph picture { engine -> store [label="write"]; }\n'


def load_hook() -> ModuleType:
    """The hook as MkDocs loads it: a file, not an installed module."""
    spec = importlib.util.spec_from_file_location("diagrams_hook_under_test", HOOK_PATH)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def site_with_picture(root: Path, dot_source: str) -> MkDocsConfig:
    """A one-page site whose page embeds ``diagrams/picture.svg``, built from ``docs/diagrams/picture.dot``."""
    docs = root / "docs"
    (docs / "diagrams").mkdir(parents=True)
    (docs / "diagrams" / "picture.dot").write_text(dot_source)
    (docs / "index.md").write_text("# Home\n\n![the picture](diagrams/picture.svg)\n")
    config_file = root / "mkdocs.yml"
    config_file.write_text(
        "site_name: pictures\n"
        f"docs_dir: {docs}\n"
        f"site_dir: {root / 'site'}\n"
        f"hooks: [{HOOK_PATH}]\n"
        "exclude_docs: 'diagrams/*.dot'\n"
        "validation: {links: {not_found: warn, unrecognized_links: warn, anchors: warn}}\n"
    )
    return load_config(config_file=str(config_file), strict=True)


def test_every_source_is_added_as_a_rendered_svg(tmp_path: Path) -> None:
    config = site_with_picture(tmp_path, A_PICTURE)
    files = config.plugins.on_files(Files([]), config=config)
    svg = files.get_file_from_path("diagrams/picture.svg")
    assert svg is not None
    assert svg.generated_by is not None
    content = svg.content_bytes
    assert content.lstrip().startswith(b"<?xml")
    assert b"<svg" in content
    assert b">engine<" in content
    assert b">write<" in content


def test_a_strict_build_writes_the_picture_and_sees_the_link(tmp_path: Path) -> None:
    config = site_with_picture(tmp_path, A_PICTURE)
    config.plugins.on_startup(command="build", dirty=False)
    try:
        build(config)
    finally:
        config.plugins.on_shutdown()
    built = tmp_path / "site" / "diagrams" / "picture.svg"
    assert b"<svg" in built.read_bytes()
    assert 'src="diagrams/picture.svg"' in (tmp_path / "site" / "index.html").read_text()


def test_a_broken_source_fails_naming_the_file_and_dots_message(tmp_path: Path) -> None:
    config = site_with_picture(tmp_path, "digraph broken { engine -> ; }\n")
    with pytest.raises(PluginError) as refused:
        load_hook().on_files(Files([]), config=config)
    message = str(refused.value)
    assert str(tmp_path / "docs" / "diagrams" / "picture.dot") in message
    assert "syntax error" in message


def test_a_broken_source_fails_the_strict_build(tmp_path: Path) -> None:
    site_with_picture(tmp_path, "digraph broken { engine -> ; }\n")
    finished = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(tmp_path / "mkdocs.yml")],
        capture_output=True,
        text=True,
        timeout=50,
        check=False,
    )
    assert finished.returncode != 0
    assert re.search(
        r"cannot render \S*/docs/diagrams/picture\.dot: .*syntax error in line 1", finished.stderr
    )


def test_without_dot_the_build_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = site_with_picture(tmp_path, A_PICTURE)
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs-here"))
    with pytest.raises(PluginError, match=r"picture\.dot: Graphviz's `dot` is not on PATH"):
        load_hook().on_files(Files([]), config=config)


def test_the_sites_own_pictures_render() -> None:
    hook = load_hook()
    sources = hook.diagram_sources(REPOSITORY / "docs")
    assert {source.stem for source in sources} >= {"architecture", "kafkatopic-path", "kraft-migration"}
    for source in sources:
        assert b"<svg" in hook.render_svg(source)
