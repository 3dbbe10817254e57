"""membound.kept: values kept on disk across processes, per version of the source (the model's, the rules'
code closures)."""

import json
from pathlib import Path

import pytest

import membound
from membound import kept
from membound.model import equations, geometry, sparse24
from membound.run import codedeps


def kept_square(calls):
    @kept.on_disk("square")
    def square(n: int, offset: int = 0) -> int:
        calls.append(n)
        return n * n + offset
    return square


def test_the_digest_covers_the_package_imported():
    assert kept.SOURCE == Path(membound.__file__).resolve().parent


def test_a_value_is_computed_once_read_back_by_the_next_process_and_anew_after_a_source_change(kept_source):
    calls = []
    square = kept_square(calls)
    assert square(3) == square(3, 0) == 9 and calls == [3]
    assert json.loads(square.file().read_text()) == {"3 0": 9}
    square.file().write_text(json.dumps({"3 0": 10}))     # what a next process finds
    square.forget()
    assert square(3) == 10 and calls == [3]
    (kept_source / "model.py").write_text("# changed\n")
    kept.digest.cache_clear()
    square.forget()
    assert square(3) == 9 and calls == [3, 3]


def test_a_damaged_or_read_only_cache_is_computed_through(kept_source, tmp_path, monkeypatch):
    calls = []
    square = kept_square(calls)
    square.file().parent.mkdir(parents=True)
    square.file().write_text('{"3 0": ')                   # cut mid-write by another tool
    assert square(3) == 9 and json.loads(square.file().read_text()) == {"3 0": 9}
    monkeypatch.setattr(kept, "CACHE", tmp_path / "file")
    (tmp_path / "file").write_text("")                      # no folder can be made under it
    kept.digest.cache_clear()
    square.forget()
    assert square(4) == 16 and calls == [3, 4]


def fused(shape, dims, radius, depth):
    return geometry.fused_support(geometry.support(shape, dims, radius), depth)


@pytest.mark.parametrize("kept_fn, fresh, args", [
    (sparse24.sparsity, lambda *a: sparse24.transform(*a, layout=sparse24.LAYOUT).sparsity, ("box", 2, 1, 3, "fp16")),
    (geometry.tc_fragments, lambda *a: len(geometry.tc_rows(fused(*a[:4]).astype(float), fused(*a[:4]), a[4])[1]),
     ("box", 2, 2, 3, "fp16")),
    (equations.fused_points, lambda *a: int(fused(*a).sum()), ("star", 2, 2, 3)),
])
def test_the_models_kept_values_are_those_computed_fresh(kept_source, kept_fn, fresh, args):
    kept_fn.forget()
    assert kept_fn(*args) == fresh(*args)
    kept_fn.forget()                                        # read back from the file
    assert kept_fn(*args) == fresh(*args) and kept_fn.file().exists()
    kept_fn.forget()


def test_the_tensor_cores_s_from_the_kept_parts_is_the_one_from_their_rows(kept_source):
    mask = fused("star", 3, 1, 2)
    rows, _ = geometry.tc_rows(mask.astype(float), mask, "fp32")
    assert geometry.tc_sparsity("star", 3, 1, 2, "fp32") == mask.sum() / (8 * rows[:, 3].sum())


def test_a_rules_code_is_kept_and_follows_an_edit_of_an_import(kept_source):
    root = kept_source.parents[1]
    (kept_source / "a.py").write_text("from membound import b\n")
    for name in ("b", "c"):
        (kept_source / f"{name}.py").write_text("")

    def code():     # as the next process finds it: nothing in memory
        codedeps._imports.cache_clear()
        codedeps._closure.cache_clear()
        codedeps._kept_closure.forget()
        kept.digest.cache_clear()
        return codedeps.code(root, "membound.a")

    first = ["src/membound/__init__.py", "src/membound/a.py", "src/membound/b.py"]
    assert code() == first
    assert json.loads(codedeps._kept_closure.file().read_text()) == {"membound.a": first}
    (kept_source / "a.py").write_text("from membound import b, c\n")
    assert code() == [*first, "src/membound/c.py"]
