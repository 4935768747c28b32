"""``qtop ops FILE``: text, --json, --top, --sort, --warmup, --kind, and exit 2 on bad input."""

from __future__ import annotations

import json

import pytest
from profiler_fixtures import path

from qtop.cli import main
from qtop.commands import ops
from qtop.parsers import KINDS


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["ops", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_seed_text_shows_wait_share_and_gather_on_dma(capsys):
    code, out, err = _run(capsys, str(path("seed_linting_excerpt.txt")))

    assert code == 0
    assert err == ""
    assert "graph token_ar1_cl4096_1_of_6: 1 execute(s)" in out
    assert "accelerator 1384 us, excluding wait 159 us: waiting 1225 us = 88.5%" in out
    gather = next(line for line in out.splitlines() if "/Gather" in line)
    assert gather.split() == ["/Gather", "OpId_21", "7411", "59.9%", "420", "DMA"]


def test_table_columns_are_aligned(capsys):
    _, out, _ = _run(capsys, str(path("viewer_linting_multigraph.txt")))

    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("op "))
    header, rule, first_row = lines[at], lines[at + 1], lines[at + 2]
    assert set(rule.strip()) == {"-", " "}
    # Text columns start together; number columns end together.
    assert first_row.index("OpId_21") == header.index("id")
    assert first_row.index("7000") + len("7000") == header.index("cycles p50") + len("cycles p50")
    assert first_row.split()[:2] == ["/model/embed_tokens/Gather", "OpId_21"]
    assert "share growing over the run: /model/layers.0/self_attn/Softmax (OpId_40)" in out


def test_top_and_sort(capsys):
    _, out, _ = _run(
        capsys, str(path("viewer_linting_multigraph.txt")), "--top", "1", "--sort", "cycles"
    )

    assert "ops by median cycles (1 of 4;" in out
    assert "ops by median cycles (1 of 5;" in out


def test_json_has_report_and_sorted_cut_breakdown(capsys):
    code, out, _ = _run(capsys, str(path("viewer_linting_multigraph.txt")), "--json", "--top", "2")

    assert code == 0
    document = json.loads(out)
    assert document["kind"] == "qnn-viewer-text"
    assert len(document["report"]["graphs"]) == 2
    graph = document["breakdown"]["graphs"][0]
    assert graph["ops_sorted_by"] == "wait"
    assert [op["key"] for op in graph["ops"]] == ["OpId_21", "OpId_3"]
    assert graph["wait_share_median"] == pytest.approx(0.7)


def test_warmup_zero_measures_every_execute(capsys):
    _, out, _ = _run(capsys, str(path("viewer_detailed_2_45.txt")), "--warmup", "0", "--json")

    graph = json.loads(out)["breakdown"]["graphs"][0]
    assert graph["measured"] == 3
    assert graph["accelerator_us_median"] == 55


def test_kind_can_be_forced(capsys):
    code, out, _ = _run(capsys, str(path("seed_linting_excerpt.txt")), "--kind", "qnn-viewer-text")

    assert code == 0
    assert ": qnn-viewer-text, 1 execute(s)" in out.splitlines()[0]


def test_ticks_trap_is_explained_in_the_output(capsys):
    _, out, _ = _run(capsys, str(path("viewer_detailed_2_45.txt")))

    assert "note: 6 value(s) of 'Time for initial VTCM acquire'" in out
    assert "19.2 MHz timer ticks" in out


def test_missing_file_exits_2(capsys, tmp_path):
    code, out, err = _run(capsys, str(tmp_path / "nope.txt"))

    assert (code, out) == (2, "")
    assert err == f"qtop ops: error: {tmp_path / 'nope.txt'}: no such file\n  fix: check the path\n"


def test_directory_and_binary_files_exit_2(capsys, tmp_path):
    binary = tmp_path / "qnn-profiling-data_0.log"
    binary.write_bytes(b"\x00\x01QNN\x00")

    assert _run(capsys, str(tmp_path))[0] == 2
    code, _, err = _run(capsys, str(binary))
    assert code == 2
    assert "binary data" in err
    assert "qnn-profile-viewer --input_log qnn-profiling-data_0.log" in err


def test_onnxruntime_csv_exits_2_with_the_reason(capsys):
    code, out, err = _run(capsys, str(path("onnxruntime_qnn_ep.csv")))

    assert (code, out) == (2, "")
    assert "this is ONNX Runtime's QNN EP profiling CSV" in err
    assert "Traceback" not in err


def test_unrecognised_file_and_wrong_forced_kind_exit_2(capsys, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("nothing to see\n")

    code, _, err = _run(capsys, str(notes))
    assert code == 2
    assert "cannot tell which profiler wrote this file" in err

    code, _, err = _run(capsys, str(path("seed_linting_excerpt.txt")), "--kind", "ai-hub")
    assert code == 2
    assert "not readable as JSON" in err


def test_unknown_kind_name_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["ops", str(path("seed_linting_excerpt.txt")), "--kind", "perfetto"])

    assert exited.value.code == 2
    assert "invalid choice: 'perfetto'" in capsys.readouterr().err


def test_command_kind_choices_match_the_parsers():
    assert ops.KIND_CHOICES == KINDS


def test_an_internal_error_names_the_debug_command_that_works(capsys, monkeypatch):
    def broken(*args: object, **kwargs: object) -> str:
        raise RuntimeError("a bug")

    monkeypatch.setattr(ops, "ops_output", broken)
    seed = str(path("seed_linting_excerpt.txt"))

    code, _, err = _run(capsys, seed, "--top", "3")

    assert code == 1
    assert "internal error: RuntimeError: a bug" in err
    hint = err.split("this shows: ")[1].strip()
    assert hint == f"qtop --debug ops {seed} --top 3"
    # The hint's command line is one argparse takes, and it shows the traceback.
    code = main(hint.split()[1:])
    assert code == 1
    assert "Traceback (most recent call last)" in capsys.readouterr().err


def test_a_file_over_the_size_limit_is_refused_and_the_limit_can_be_raised(capsys, tmp_path):
    big = tmp_path / "big.txt"
    big.write_text(path("viewer_linting_multigraph.txt").read_text() * 3)

    code, out, err = _run(capsys, str(big), "--max-size", "10k")
    assert (code, out) == (2, "")
    assert "0.0172 MB, more than the 0.01 MB qtop ops reads" in err
    assert "--max-size 1MB" in err

    assert _run(capsys, str(big), "--max-size", "1MB")[0] == 0
    assert _run(capsys, str(big), "--max-size", "0")[0] == 0


@pytest.mark.parametrize("size", ["ten", "-5MB", "5TB", "1e9"])
def test_a_size_that_is_not_one_is_a_usage_error(capsys, size):
    with pytest.raises(SystemExit) as exited:
        main(["ops", str(path("seed_linting_excerpt.txt")), "--max-size", size])

    assert exited.value.code == 2
    assert "--max-size" in capsys.readouterr().err


def test_names_from_the_file_are_printed_escaped(capsys, tmp_path):
    hostile = tmp_path / "hostile.txt"
    hostile.write_text(
        path("seed_linting_excerpt.txt").read_text().replace("/Gather", "/Gather\x1b]52;c;QQ==\x07")
    )

    code, out, _ = _run(capsys, str(hostile))

    assert code == 0
    assert "\x1b" not in out and "\x07" not in out
    assert "/Gather\\x1b]52;c;QQ==\\x07" in out
