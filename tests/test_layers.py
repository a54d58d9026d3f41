"""The layers point one way (pyproject's import-linter contracts), each contract fails on a probe that breaks it, and
nothing imports the app root back."""
from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SERVICE = ROOT / "service"
#: The entry points, which start an app: the only modules that may take `create_app` from the root.
ENTRY_POINTS = {"cli.py", "demo.py", "wsgi.py", "entry.py"}


def _lint_imports(root: Path, *args: str) -> subprocess.CompletedProcess:
    linter = Path(sys.executable).with_name("lint-imports")
    # The tree at `root` is the one analysed, not the checkout the virtualenv installs in editable mode.
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(linter), *args], cwd=root, env=env, capture_output=True, text=True, timeout=120)


def test_the_import_contracts_hold():
    run = _lint_imports(ROOT)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "0 broken" in run.stdout


#: The domain packages, which import no web framework, and the web framework's packages.
DOMAIN = ["registry", "dispatch", "keys", "conversations", "records", "ops", "importing", "llm"]
WEB = ["flask", "werkzeug", "flask_smorest", "marshmallow"]
#: What dispatch may not import: the database, and request admission.
NOT_IN_DISPATCH = ["peewee", "service.database", "service.models", "service.pool", "service.gate"]


@pytest.fixture(scope="module")
def probed(tmp_path_factory) -> str:
    """lint-imports' report on a copy of the tree holding one probe per rule: a new package of `service` named in no
    layer (importing the API, which the layers alone would allow it), a module in each domain package importing each
    web framework, one in dispatch importing the database and the work gate, and one in the app-wide HTTP layer
    importing the registry."""
    copy = tmp_path_factory.mktemp("probed")
    skip = shutil.ignore_patterns("__pycache__", "static", "templates", "data")
    for package in ("service", "mock_backend", "conformance", "serving", "commandline"):
        shutil.copytree(ROOT / package, copy / package, ignore=skip)
    shutil.copy(ROOT / "pyproject.toml", copy)
    (copy / "service" / "probe").mkdir()
    (copy / "service" / "probe" / "__init__.py").write_text("import service.api\n", encoding="utf-8")
    for package in DOMAIN:
        for module in WEB + (NOT_IN_DISPATCH if package == "dispatch" else []):
            _probe(copy / "service" / package, module)
    _probe(copy / "service" / "http", "service.registry")
    run = _lint_imports(copy, "--no-cache")
    assert run.returncode == 1, run.stdout[-4000:] + run.stderr[-2000:]
    # The report wraps long lines; the assertions read it as one line per finding.
    return " ".join(run.stdout.split())


def _probe(package: Path, module: str) -> None:
    """A module of `package` importing `module`, and nothing else (a module a probe, so each chain is direct)."""
    (package / f"probe_{module.rpartition('.')[2]}.py").write_text(f"import {module}\n", encoding="utf-8")


def test_a_package_named_in_no_layer_breaks_the_layers(probed):
    assert "The following modules are not listed as layers: - service.probe (Since" in probed


@pytest.mark.parametrize("package", DOMAIN)
def test_a_web_framework_in_the_domain_breaks_its_contract(probed, package):
    for framework in WEB:
        assert f"service.{package} is not allowed to import {framework}:" in probed
        assert f"service.{package}.probe_{framework} -> {framework} (l.1)" in probed


@pytest.mark.parametrize("module", NOT_IN_DISPATCH)
def test_the_database_or_the_gate_in_dispatch_breaks_its_contract(probed, module):
    assert f"service.dispatch is not allowed to import {module}:" in probed
    assert f"service.dispatch.probe_{module.rpartition('.')[2]} -> {module} (l.1)" in probed


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


def test_the_registry_in_the_app_wide_http_layer_breaks_its_contract(probed):
    assert "service.http is not allowed to import service.registry:" in probed
    assert "service.http.probe_registry -> service.registry (l.1)" in probed
