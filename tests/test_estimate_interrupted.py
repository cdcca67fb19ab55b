"""A run stopped during its error estimate keeps the run: simulate hands the finished run to `finished` before the
companion run at ten times the tolerances (simulation/run.py), so a cancel there loses only the estimate, and
`mbstudio simulate` interrupted there (Ctrl-C) still writes the run's output, the same bytes as a run without the
estimate, and says so."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from mbstudio import samples
from mbstudio.cli import main
from mbstudio.commands import simulate as command
from mbstudio.simulation.run import Cancelled, simulate

T_END = 0.5


def test_a_cancel_during_the_companion_run_keeps_the_finished_run():
    """`finished` gets the whole run, equal to one made without an estimate, and a cancel set there stops the
    companion run (Cancelled), not the run."""
    cancel, kept = threading.Event(), []

    def finished(result) -> None:
        kept.append(result)
        cancel.set()

    with pytest.raises(Cancelled):
        simulate(samples.load("four_bar"), T_END, cancel=cancel, finished=finished)
    reference = simulate(samples.load("four_bar"), T_END, error_estimate=False)
    assert len(kept) == 1 and kept[0].provenance.error_estimate is None
    assert np.array_equal(kept[0].q, reference.q) and np.array_equal(kept[0].qd, reference.qd)


def test_ctrl_c_during_the_error_estimate_still_writes_the_run(tmp_path, monkeypatch, capsys):
    """Ctrl-C arriving once the run is done (the KeyboardInterrupt raised at the start of the companion run): the
    CSV is written, byte for byte that of a run without the estimate, the summary notes the interruption, and
    the exit status is 130 (interrupted)."""

    def interrupted(*args, finished, **kwargs):
        def then_ctrl_c(result) -> None:
            finished(result)
            raise KeyboardInterrupt

        return simulate(*args, finished=then_ctrl_c, **kwargs)

    path = str(samples.path("four_bar"))
    plain = tmp_path / "plain.csv"
    assert main(["simulate", path, "--t-end", str(T_END), "--out", str(plain), "--quiet", "--no-error-estimate"]) == 0
    monkeypatch.setattr(command, "simulate", interrupted)
    out = tmp_path / "out.csv"
    assert main(["simulate", path, "--t-end", str(T_END), "--out", str(out), "--quiet"]) == 130
    assert out.read_bytes() == plain.read_bytes()
    assert "interrupted (Ctrl-C) after the run" in capsys.readouterr().out
