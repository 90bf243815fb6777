"""An unsynced output takes its target's place by a swap of the two names and the removal of the
old file (ddx/out/exchange.py), not by a rename over the target (which makes ext4 write the new
file out there and then); the result is what os.replace gives."""

from __future__ import annotations

import os
import stat
import sys

import pytest

from ddx.out import exchange
from ddx.out.outfile import Output


def test_exchange_swaps_two_files_or_does_nothing(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("new")
    b.write_text("old")
    if exchange.exchange(str(a), str(b)):
        assert (a.read_text(), b.read_text()) == ("old", "new")
    else:  # (a system or file system that cannot swap: both as they were)
        assert not sys.platform.startswith("linux") or exchange._renameat2() is False
        assert (a.read_text(), b.read_text()) == ("new", "old")
    assert exchange.exchange(str(a), str(tmp_path / "missing")) is False
    assert not (tmp_path / "missing").exists()


def test_linux_has_the_swap():
    if not sys.platform.startswith("linux"):
        assert exchange._renameat2() is False
    else:
        assert callable(exchange._renameat2())


@pytest.mark.parametrize("existing", [True, False])
def test_an_unsynced_output_replaces_its_target_keeping_its_mode(tmp_path, monkeypatch, existing):
    target = tmp_path / "o.csv"
    if existing:
        target.write_text("old results\n" * 1000)
        os.chmod(target, 0o640)
    swapped: list = []
    real = exchange.exchange
    monkeypatch.setattr(exchange, "exchange", lambda a, b: swapped.append(b) or real(a, b))
    with Output(str(target), option="-o", sync=False) as out:
        out.write("value\n1.0\n")
    assert target.read_text() == "value\n1.0\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.csv"]  # (no temporary file left)
    assert swapped == ([str(target)] if existing else [])  # (nothing to swap with: a rename)
    if existing:
        assert stat.S_IMODE(os.stat(target).st_mode) == 0o640


def test_a_link_as_target_is_followed_and_the_file_it_names_gets_the_results(tmp_path):
    (tmp_path / "real.csv").write_text("old\n")
    (tmp_path / "link.csv").symlink_to(tmp_path / "real.csv")
    with Output(str(tmp_path / "link.csv"), option="-o", sync=False) as out:
        out.write("new\n")
    assert os.path.islink(tmp_path / "link.csv")
    assert (tmp_path / "real.csv").read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.csv", "real.csv"]


def test_the_temporary_file_is_new_private_and_never_an_existing_one(tmp_path, monkeypatch):
    from ddx.out import outfile

    (tmp_path / ".o.csv.000000000000.ddx-tmp").write_text("someone else's")
    draws = iter([bytes(6), bytes(6), b"\x01" * 6])  # the first two names are taken
    monkeypatch.setattr(os, "urandom", lambda n: next(draws))
    fd, name = outfile._new_file(str(tmp_path), ".o.csv.", ".ddx-tmp")
    os.close(fd)
    assert name == str(tmp_path / ".o.csv.010101010101.ddx-tmp")
    assert stat.S_IMODE(os.stat(name).st_mode) == 0o600 and os.path.getsize(name) == 0
    assert (tmp_path / ".o.csv.000000000000.ddx-tmp").read_text() == "someone else's"
