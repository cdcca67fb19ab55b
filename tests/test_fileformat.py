"""The .mbs file format: canonical text that round-trips byte for byte, atomic saves, clear read errors."""

from __future__ import annotations

import json
import os
import stat

import pytest

from mbstudio import samples
from mbstudio.model import Model, ModelError, dumps, fileformat, load, loads, save, validate
from mbstudio.model.fileformat import from_dict, to_dict
from mbstudio.model.tyre_files import with_relative_tyre_files

# Written by hand following docs/file-format.md (key order, two-space indent, short scalar lists on one
# line, one trailing newline), so that it checks dumps() against the documented format, not against itself.
PENDULUM = """\
{
  "format": "mbstudio",
  "schema_version": 2,
  "name": "pendulum",
  "description": "Ein Pendel – Stablänge l ≈ 0.3196 m, µ = 0",
  "gravity": [0, 0, "-g"],
  "parameters": [
    {
      "name": "g",
      "value": 9.81,
      "unit": "m/s^2"
    },
    {
      "name": "l",
      "value": 0.3196,
      "description": "rod length"
    }
  ],
  "bodies": [
    {
      "label": "rod",
      "name": "Stab",
      "inertia": {
        "m": 2,
        "mx": 0,
        "my": 0,
        "mz": "-l",
        "Ixx": "2*l**2/3",
        "Ixy": 0,
        "Ixz": 0.0,
        "Iyy": "2*l**2/3",
        "Iyz": 0,
        "Izz": 0
      },
      "points": {
        "Spitze": [0, 0, "-l"]
      },
      "frames": {
        "tip": {
          "origin": "Spitze",
          "z": [1, 0, 0],
          "x": [0, 1, 0]
        }
      },
      "shape": {
        "type": "cylinder",
        "radius": 0.01,
        "length": "l",
        "axis": [0, 0, 1],
        "origin": [0, 0, "-l/2"],
        "color": "#3080c0"
      }
    }
  ],
  "joints": [
    {
      "name": "pivot",
      "type": "revolute",
      "parent": "ground",
      "child": "rod",
      "parent_frame": "hinge",
      "child_frame": {
        "origin": [0, 0, 0],
        "z": [1, 0, 0]
      },
      "coordinates": [
        {
          "name": "phi",
          "initial": 0.5,
          "min": -3.0,
          "max": 3
        }
      ]
    }
  ],
  "independent_coordinates": "auto",
  "ground": {
    "points": {
      "Ö": [0, 0, 1.5]
    },
    "frames": {
      "hinge": {
        "origin": "Ö",
        "z": [1, 0, 0]
      }
    }
  }
}
"""


def four_bar_text(four_bar) -> str:
    return dumps(from_dict(four_bar()))


# ---------------------------------------------------------------- round trip


def test_hand_written_canonical_text_round_trips_byte_for_byte():
    model = loads(PENDULUM)
    assert dumps(model) == PENDULUM
    assert model.bodies[0].points["Spitze"] == [0, 0, "-l"]
    assert model.ground.frames["hinge"].origin == "Ö"


def test_four_bar_dumps_loads_dumps_is_stable(four_bar):
    model = from_dict(four_bar())
    validate(model)
    text = dumps(model)
    assert text.endswith("}\n") and not text.endswith("\n\n")
    again = loads(text)
    assert again == model
    assert dumps(again) == text
    assert json.loads(text) == to_dict(model)


@pytest.mark.parametrize("value", [0.1, -0.0, 5e-324, 1e22, 1.7976931348623157e308, 3, -7, 2**70, True, None, "m"])
def test_a_scalar_is_written_as_json_writes_it(value):
    # numbers take a shortcut past json's encoder (fileformat._scalar): the text, hence every engine's key, is the same
    assert fileformat._scalar(value) == json.dumps(value)


@pytest.mark.parametrize(
    "text", ["", "m", "kg m^2", "Ö", "日本", 'a"b', "back\\slash", "tab\there", "new\nline", "\x7f", "\u2028", "\u00a0"]
)
def test_a_text_is_written_as_json_writes_it(text):
    # texts with nothing to escape take a shortcut past json's encoder too; the others keep it (non-ASCII as itself)
    assert fileformat._scalar(text) == json.dumps(text, ensure_ascii=False)
    assert fileformat._scalar("\ud800") == json.dumps("\ud800")  # a lone surrogate stays escaped


def test_numbers_and_expressions_are_kept_as_written():
    """0 stays 0, 0.0 stays 0.0, 3 stays 3, an expression stays its text: nothing is normalised away."""
    model = loads(PENDULUM)
    inertia = model.bodies[0].inertia
    assert inertia["m"] == 2 and isinstance(inertia["m"], int)
    assert inertia["Ixz"] == 0.0 and isinstance(inertia["Ixz"], float)
    assert inertia["Ixx"] == "2*l**2/3"
    coord = model.joints[0].coordinates[0]
    assert (repr(coord.min), repr(coord.max)) == ("-3.0", "3")


def test_non_canonical_text_loads_to_the_same_model_and_saves_canonically():
    data = json.loads(PENDULUM)
    scrambled = json.dumps(dict(reversed(list(data.items()))), indent=7, sort_keys=False)
    assert scrambled != PENDULUM
    model = loads(scrambled)
    assert model == loads(PENDULUM)
    assert dumps(model) == PENDULUM


def test_text_outside_ascii_is_written_as_itself_in_keys_and_values():
    assert "\\u" not in PENDULUM and '"Ö"' in dumps(loads(PENDULUM))


def test_a_lone_surrogate_from_an_escape_round_trips_and_can_be_saved(tmp_path, four_bar):
    """JSON may escape a lone surrogate ("\\ud800"); UTF-8 cannot hold it, so it must stay escaped."""
    data = four_bar()
    data["description"] = "broken \ud800 text"
    text = json.dumps(data)
    model = loads(text)
    out = dumps(model)
    assert "\\ud800" in out
    assert loads(out) == model and dumps(loads(out)) == out
    save(model, tmp_path / "s.mbs")
    assert load(tmp_path / "s.mbs") == model


def test_save_then_load_gives_an_equal_model_and_the_canonical_bytes(tmp_path, four_bar):
    model = from_dict(four_bar())
    path = tmp_path / "four_bar.mbs"
    save(model, path)
    assert load(path) == model
    assert path.read_bytes() == dumps(model).encode("utf-8")  # UTF-8, "\n" line ends on every platform
    save(load(path), path)
    assert path.read_bytes() == dumps(model).encode("utf-8")


def test_save_and_load_accept_str_paths(tmp_path):
    path = str(tmp_path / "p.mbs")
    save(loads(PENDULUM), path)
    assert dumps(load(path)) == PENDULUM


@pytest.mark.parametrize("name", samples.names())
def test_sample_loads_and_redumps_to_identical_bytes(name):
    path = samples.path(name)
    model = load(path)
    # as saved back to its folder (a tyre's .tir path, absolute once loaded, written relative to it)
    assert dumps(with_relative_tyre_files(model, path.parent)[0]).encode("utf-8") == path.read_bytes()
    assert samples.load(name) == model


def test_a_default_model_round_trips():
    model = Model()
    validate(model)
    assert loads(dumps(model)) == model


# ---------------------------------------------------------------- atomic save


def _fail_replace(*args, **kwargs):
    raise OSError(28, "No space left on device")


def test_a_failed_rename_leaves_the_original_file_and_no_temporary_file(tmp_path, four_bar, monkeypatch):
    path = tmp_path / "model.mbs"
    original = PENDULUM.encode("utf-8")
    path.write_bytes(original)
    monkeypatch.setattr(fileformat.os, "replace", _fail_replace)
    with pytest.raises(ModelError) as info:
        save(from_dict(four_bar()), path)
    assert str(path) in str(info.value) and "No space left" in str(info.value)
    assert path.read_bytes() == original
    assert os.listdir(tmp_path) == ["model.mbs"]


def test_an_interrupted_save_removes_its_temporary_file_and_lets_the_interrupt_through(tmp_path, monkeypatch):
    def interrupt(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(fileformat.os, "fsync", interrupt)
    with pytest.raises(KeyboardInterrupt):
        save(loads(PENDULUM), tmp_path / "new.mbs")
    assert os.listdir(tmp_path) == []


def test_save_writes_through_a_temporary_file_in_the_same_folder(tmp_path, monkeypatch):
    seen = []
    real_replace = os.replace

    def spy(src, dst):
        seen.append((os.path.dirname(src), os.path.basename(src), dst))
        real_replace(src, dst)

    monkeypatch.setattr(fileformat.os, "replace", spy)
    save(loads(PENDULUM), tmp_path / "p.mbs")
    [(folder, name, dst)] = seen
    assert folder == str(tmp_path) and name.startswith(".p.mbs.") and name.endswith(".tmp")
    assert str(dst) == str(tmp_path / "p.mbs")


def test_save_over_an_existing_file_replaces_it_completely(tmp_path, four_bar):
    path = tmp_path / "model.mbs"
    path.write_text("x" * 100_000, encoding="utf-8")  # longer than the new content: no leftover tail
    model = loads(PENDULUM)
    save(model, path)
    assert path.read_text(encoding="utf-8") == PENDULUM
    save(from_dict(four_bar()), path)
    assert load(path) == from_dict(four_bar())
    assert os.listdir(tmp_path) == ["model.mbs"]


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_save_keeps_the_permissions_of_the_file_it_replaces(tmp_path):
    path = tmp_path / "model.mbs"
    path.write_text("{}", encoding="utf-8")
    os.chmod(path, 0o640)
    save(loads(PENDULUM), path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_a_new_file_gets_the_permissions_the_umask_gives(tmp_path):
    old = os.umask(0o022)
    try:
        save(loads(PENDULUM), tmp_path / "new.mbs")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "new.mbs").st_mode) == 0o644


def test_saving_into_a_missing_folder_names_the_path(tmp_path):
    path = tmp_path / "no such folder" / "m.mbs"
    with pytest.raises(ModelError) as info:
        save(loads(PENDULUM), path)
    assert info.value.where == str(path)
    assert not path.parent.exists()


# ---------------------------------------------------------------- read errors


def test_reading_a_missing_file_names_the_path(tmp_path):
    path = tmp_path / "missing.mbs"
    with pytest.raises(ModelError) as info:
        load(path)
    assert info.value.where == str(path)
    assert str(path) in str(info.value) and "cannot be read" in str(info.value)


def test_reading_a_folder_names_the_path(tmp_path):
    with pytest.raises(ModelError) as info:
        load(tmp_path)
    assert str(tmp_path) in str(info.value)


def test_reading_a_file_that_is_not_utf8_names_the_path(tmp_path):
    path = tmp_path / "latin1.mbs"
    path.write_bytes(PENDULUM.encode("latin-1", errors="replace"))
    with pytest.raises(ModelError) as info:
        load(path)
    assert str(path) in str(info.value)


def test_a_file_with_a_byte_order_mark_or_windows_line_ends_loads(tmp_path):
    path = tmp_path / "notepad.mbs"
    path.write_bytes(b"\xef\xbb\xbf" + PENDULUM.replace("\n", "\r\n").encode("utf-8"))
    assert dumps(load(path)) == PENDULUM


def test_malformed_json_in_a_file_names_the_path_line_and_column(tmp_path):
    path = tmp_path / "bad.mbs"
    path.write_text(PENDULUM.replace('"schema_version": 2,', '"schema_version": 1'), encoding="utf-8")
    with pytest.raises(ModelError) as info:
        load(path)
    assert f"{path}, line 4, column 3" in str(info.value)
