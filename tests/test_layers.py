"""The layers point one way (pyproject's import-linter contracts), and nothing imports the app root back."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVICE = ROOT / "service"
#: The entry points, which start an app: the only modules that may take `create_app` from the root.
ENTRY_POINTS = {"cli.py", "demo.py", "wsgi.py", "entry.py"}


def test_the_import_contracts_hold():
    linter = Path(sys.executable).with_name("lint-imports")
    run = subprocess.run([str(linter)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "0 broken" in run.stdout


def _names_taken_from_the_root(path: Path, package: Path = SERVICE) -> list[str]:
    """Names `path` imports from `package` itself (its __init__), not from a module of it."""
    depth = len(path.relative_to(package).parts)  # service/x.py: 1; service/a/x.py: 2
    submodules = {p.stem for p in package.glob("*.py")} | {p.name for p in package.iterdir() if p.is_dir()}
    taken = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        from_root = (node.level == depth and node.module is None) or (node.level == 0 and node.module == "service")
        if from_root:
            taken += [alias.name for alias in node.names if alias.name not in submodules]
    return taken


def test_nothing_imports_the_app_root_back():
    offenders = {str(path.relative_to(ROOT)): names for path in SERVICE.rglob("*.py")
                 if path.name != "__init__.py" or path.parent != SERVICE
                 if path.relative_to(SERVICE).as_posix() not in ENTRY_POINTS
                 if (names := _names_taken_from_the_root(path))}
    assert offenders == {}


def test_the_root_check_sees_an_import_of_the_root(tmp_path):
    """The check above can fail: `from .. import app_config` in a package module is a name from the root."""
    (tmp_path / "api").mkdir()
    (tmp_path / "registry.py").write_text("", encoding="utf-8")
    probe = tmp_path / "api" / "routes.py"
    probe.write_text("from .. import app_config, registry\nfrom ..registry import x\n", encoding="utf-8")
    assert _names_taken_from_the_root(probe, tmp_path) == ["app_config"]
