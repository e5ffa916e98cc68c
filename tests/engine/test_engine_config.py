from __future__ import annotations

from pathlib import Path

import pytest

from rcpkit.engine.config import default_index_path, load_config


def test_the_file_environment_and_flags_layer_in_that_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_file = tmp_path / "rcpkit.toml"
    config_file.write_text(
        '[engine]\nindex = "/from/file"\nembedder = "hashing:8"\nmax_k = 50\n'
        'array_fields = ["teams"]\n[engine.filter_fields]\nteam = "keyword"\n'
    )
    assert load_config(config_file).max_k == 50
    assert load_config(config_file).filter_fields["team"] == "keyword"
    assert load_config(config_file).filter_fields["path"] == "text"  # defaults kept
    assert load_config(config_file).array_fields == ["folders", "tag", "teams"]
    monkeypatch.setenv("RCPKIT_INDEX", str(tmp_path / "env"))
    monkeypatch.setenv("RCPKIT_READ_ONLY", "1")
    from_env = load_config(config_file)
    assert from_env.index == tmp_path / "env"
    assert not from_env.writable
    flagged = load_config(config_file, index=tmp_path / "flag", embedder="hashing:16")
    assert (flagged.index, flagged.embedder) == (tmp_path / "flag", "hashing:16")


def test_unknown_settings_are_a_clear_error(tmp_path: Path) -> None:
    config_file = tmp_path / "rcpkit.toml"
    config_file.write_text("[engine]\nmax_kk = 5\n")
    with pytest.raises(ValueError, match="max_kk"):
        load_config(config_file)


def test_the_default_index_lives_under_the_user_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RCPKIT_INDEX", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_index_path() == tmp_path / "rcpkit" / "index"


def test_a_wrongly_typed_setting_is_one_line_naming_key_value_and_type(tmp_path: Path) -> None:
    config_file = tmp_path / "rcpkit.toml"
    for line, allowed in [
        ('max_k = "200"', "an integer"),
        ("writable = 1", "true or false"),
        ("threads = true", "an integer"),
        ('trusted_sources = ["docs/", 2]', "an array of strings"),
        ("index = 5", "a string"),
    ]:
        config_file.write_text(f"[engine]\n{line}\n")
        with pytest.raises(ValueError, match=allowed) as raised:
            load_config(config_file)
        message = str(raised.value)
        assert "\n" not in message
        assert line.split(" = ")[0] in message


def test_the_cli_reports_a_wrongly_typed_setting_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rcpkit.cli import main

    config_file = tmp_path / "rcpkit.toml"
    config_file.write_text('[engine]\nmax_k = "many"\n')
    status = main(["query", "x", "--config", str(config_file), "--index", str(tmp_path / "i")])
    assert status == 2
    assert "[engine] max_k = 'many' is not allowed; it takes an integer" in capsys.readouterr().err


def test_bm25_parameters_are_settings_fixed_when_the_index_is_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """k1, b and the title weight come from [engine]; the index records them, an index
    opened without them ranks with its own, and one naming others is refused."""
    from rcpkit.cli import main

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Ranking\n\nBM25 saturation of term frequency.\n")
    (notes / "b.md").write_text("# Cooking\n\nA stew of frequency and saturation.\n")
    index = tmp_path / "index"
    tuned = tmp_path / "tuned.toml"
    tuned.write_text('[engine]\nembedder = "hashing:8"\nbm25_k1 = 1.7\nbm25_title_weight = 2\n')
    plain = tmp_path / "plain.toml"
    plain.write_text('[engine]\nembedder = "hashing:8"\n')
    other = tmp_path / "other.toml"
    other.write_text('[engine]\nembedder = "hashing:8"\nbm25_k1 = 1.5\n')
    assert main(["index", str(notes), "--config", str(tuned), "--index", str(index)]) == 0
    capsys.readouterr()

    from rcpkit.engine.store.sqlite import SQLiteStore

    store = SQLiteStore(index / "index.sqlite3")
    assert (store.bm25.k1, store.bm25.title_weight) == (1.7, 2.0)  # b: the default
    store.close()
    assert main(["query", "saturation", "--config", str(plain), "--index", str(index)]) == 0
    capsys.readouterr()
    assert main(["query", "saturation", "--config", str(other), "--index", str(index)]) == 2
    err = capsys.readouterr().err
    assert "ranks with BM25 k1 1.7, b 0.6, title weight 2" in err
    assert "not k1 = 1.5" in err
