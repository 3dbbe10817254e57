"""The code a rule depends on: the membound modules a script or module imports, transitively (read
from the source with `ast`, nothing is imported), so that the rules list them as inputs and an edit
reruns exactly the outputs made through the edited code (Snakemake's mtime trigger). A module's closure
in the checkout whose membound is the one imported is kept on disk per version of the source
(membound.kept): every Snakemake start, each job's too, lists the code of every rule."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

from membound import kept

PACKAGE = "membound"


def _file(root: Path, module: str) -> Path | None:
    """The source file of a membound module under root/src (a package's __init__.py), None if none."""
    base = root / "src" / Path(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


@cache
def _imports(root: Path, path: Path) -> frozenset[str]:
    """The membound modules `path` imports (`from membound.x import y` counts y when it is a module)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == PACKAGE}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == PACKAGE:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names if _file(root, f"{node.module}.{a.name}")}
    parents = {".".join(m.split(".")[:i]) for m in found for i in range(1, m.count(".") + 1)}
    return frozenset(found | parents)


@cache
def _closure(root: Path, module: str) -> frozenset[Path]:
    """The files of `module` and of every membound module it imports, transitively (a package and
    its submodules may import each other)."""
    out, seen, todo = set(), set(), [module]
    while todo:
        name = todo.pop()
        path = _file(root, name) if name not in seen else None
        seen.add(name)
        if path is not None:
            out.add(path)
            todo.extend(_imports(root, path) - seen)
    return frozenset(out)


@kept.on_disk("code-closure")
def _kept_closure(module: str) -> list[str]:
    """_closure of `module` in the checkout of the membound imported, its paths relative to the checkout."""
    root = kept.SOURCE.parents[1]
    return sorted(path.relative_to(root).as_posix() for path in _closure(root, module))


def code(root, *scripts_or_modules: str) -> list[str]:
    """Paths relative to the checkout `root` of the given scripts (paths ending .py) or modules
    (dotted names) and of every membound module under root/src they import, transitively, sorted."""
    root = Path(root).resolve()
    own = (root / "src" / PACKAGE).resolve() == kept.SOURCE    # its membound is the one imported

    def closure(module):
        return {root / path for path in _kept_closure(module)} if own else _closure(root, module)

    files: set[Path] = set()
    for item in scripts_or_modules:
        if item.endswith(".py"):
            files.add(root / item)
            for dep in _imports(root, root / item):
                files |= closure(dep)
        else:
            files |= closure(item)
    return sorted(str(f.relative_to(root)) for f in files)
