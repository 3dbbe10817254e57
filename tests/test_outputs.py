"""Result files: written whole or not at all, with the mode the umask gives a new file."""

import os
import stat

import pytest

from membound.run import outputs


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_outputs_honour_the_umask(tmp_path, mask, mode):
    old = os.umask(mask)
    try:
        outputs.write_text("x\n", tmp_path / "a.md")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.md").stat().st_mode) == mode


def test_a_failed_write_leaves_nothing(tmp_path):
    with pytest.raises(RuntimeError), outputs.atomic(tmp_path / "a.csv") as tmp:
        open(tmp, "w").write("partial")
        raise RuntimeError
    assert list(tmp_path.iterdir()) == []


def test_a_figure_saved_twice_a_second_apart_is_the_same_bytes(tmp_path):
    import time

    import matplotlib.pyplot as plt
    for i in (0, 1):
        fig, ax = plt.subplots()
        ax.plot([1, 2, 3])
        outputs.save_figure(fig, tmp_path / f"{i}.pdf", tmp_path / f"{i}.png")
        time.sleep(1.1 * (1 - i))                     # a PDF's creation date has seconds
    for ext in ("pdf", "png"):
        assert (tmp_path / f"0.{ext}").read_bytes() == (tmp_path / f"1.{ext}").read_bytes(), ext
