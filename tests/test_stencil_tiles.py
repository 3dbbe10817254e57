"""The stencils' tuned tiles as data: every kernels/stencil/tuned/<gpu>.yaml passes its schema and names
a GPU with a spec, and a wrong file is refused in one line naming it (the plan code's use of every tile:
tests/test_kernels_stencil.py::test_every_tile_passes_the_checks_on_its_gpu)."""

import pytest

from membound.kernels.stencil import tiles
from membound.run import config


@pytest.mark.parametrize("path", sorted(tiles.TUNED_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_tuned_file_passes_its_schema_and_names_a_gpu(path):
    assert path.stem in config.profiles()
    entries = tiles.read(path)
    assert entries and len({tiles.key_of(e) for e in entries}) == len(entries) == len(tiles.TUNED[path.stem])
    for e in entries:
        assert tiles.diff(tiles.TUNED[path.stem][tiles.key_of(e)]) == e["tile"]   # stored as its base and the changes


@pytest.mark.parametrize("line, message", [
    ("{dims: 2, shape: star, radius: 1, depth: 1, tile: {kernel: stencil_cc, VEC: one}, note: x}",
     r"tiles/0/tile/VEC: 'one' is not of type 'integer'"),
    ("{dims: 2, shape: star, radius: 1, depth: 1, tile: {kernel: stencil_cc, CH: 4}, note: x}",
     r"tiles/0: stencil_cc has no macro CH"),
    ("{dims: 2, shape: star, radius: 1, depth: 1, tile: {kernel: stencil_cc}}", r"tiles/0: 'note' is a required"),
])
def test_a_wrong_tuned_file_is_refused_naming_it(tmp_path, line, message):
    path = tmp_path / "h100.yaml"
    path.write_text(f"tiles:\n  - {line}\n")
    with pytest.raises(ValueError, match=message) as err:
        tiles.load(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_a_key_given_twice_is_refused_and_apply_replaces_it(tmp_path):
    path = tmp_path / "h100.yaml"
    one = tiles.entry((2, "star", 1, 1), dict(tiles.CC2, VEC=1), "first")
    path.write_text("tiles:\n" + 2 * f"  - {{dims: 2, shape: star, radius: 1, depth: 1, tile: {one['tile']}, note: x}}\n")
    with pytest.raises(ValueError, match=r"the key \(2, 'star', 1, 1\) has an entry before"):
        tiles.load(path)
    path.unlink()
    tiles.apply(path, [one])
    tiles.apply(path, [tiles.entry((2, "star", 1, 1), dict(tiles.CC2, BX=128), "second"),
                       tiles.entry((2, "star", 1, 1, 2), dict(tiles.ST), "third")])
    assert tiles.load(path) == {(2, "star", 1, 1): dict(tiles.CC2, BX=128), (2, "star", 1, 1, 2): tiles.ST}
    assert [e["note"] for e in tiles.read(path)] == ["second", "third"]
