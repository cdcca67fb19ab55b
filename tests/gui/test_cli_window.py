"""`mbstudio [FILE]`: the window from the command line, the summary from Python or without a display."""

from __future__ import annotations

from mbstudio import cli


def test_programmatic_calls_and_summary_flag_print_the_summary(capsys, monkeypatch):
    monkeypatch.setattr(cli, "_window", lambda path: (_ for _ in ()).throw(AssertionError("window opened")))
    assert cli.main([]) == 0 and "degrees of freedom: 2" in capsys.readouterr().out
    monkeypatch.setattr("sys.argv", ["mbstudio", "--summary"])
    assert cli.main() == 0 and "independent loops: 3" in capsys.readouterr().out


def test_the_command_line_opens_the_window_when_there_is_a_display(monkeypatch):
    opened = []
    monkeypatch.setattr(cli, "_window", lambda path: opened.append(path) or 0)
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    monkeypatch.setattr("sys.argv", ["mbstudio", "model.mbs"])
    assert cli.main() == 0 and opened == ["model.mbs"]


def test_without_a_display_the_command_line_prints_the_summary(monkeypatch, capsys):
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(cli, "_window", lambda path: (_ for _ in ()).throw(AssertionError("window opened")))
    monkeypatch.setattr("sys.argv", ["mbstudio"])
    assert cli.main() == 0 and "SLA" in capsys.readouterr().out


def test_run_opens_the_window_on_a_file_and_returns_when_it_closes(qapp, display, monkeypatch):
    from PySide6.QtCore import QTimer

    from mbstudio import samples
    from mbstudio.gui import app
    from mbstudio.gui.main_window import MainWindow

    seen = []

    def close_it():
        window = next(w for w in qapp.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible())
        seen.append((window.document.model.name, window.windowTitle()))
        window.close()
        window.deleteLater()

    QTimer.singleShot(500, close_it)
    assert app.run(str(samples.path("four_bar"))) == 0
    assert seen and seen[0][1].startswith("four_bar.mbs")
