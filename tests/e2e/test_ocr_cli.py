"""`rcpkit index` over scanned pages through the OCR worker pool, as a subprocess (issue 19)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from cli_support import HASHING, rcpkit

from rcpkit.engine.ingest import _ocr

pytestmark = pytest.mark.skipif(not _ocr.ocr_available(), reason="the 'ocr' extra is missing")

PAGES = {
    "wing.png": ("Pressure on a swept wing", "measured in the wind tunnel"),
    "shock.png": ("Shock waves in supersonic flow", "behind a blunt body"),
}
SCANNED_PDF = ("Heat transfer to a flat plate", "in laminar boundary layers")


def page(lines: tuple[str, ...]) -> object:
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("L", (640, 60 + 50 * len(lines)), 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=26)
    for number, line in enumerate(lines):
        draw.text((24, 30 + 50 * number), line, fill=0, font=font)
    return image


def scans(folder: Path) -> Path:
    folder.mkdir()
    for name, lines in PAGES.items():
        page(lines).save(folder / name)  # type: ignore[attr-defined]
    page(SCANNED_PDF).save(folder / "scanned.pdf", resolution=100.0)  # type: ignore[attr-defined]
    return folder


def documents(index: Path) -> list[tuple[str, str, str]]:
    """Every document's id, text and OCR regions, as ``rcpkit export`` writes them."""
    exported = rcpkit("export", "--index", str(index), *HASHING)
    assert exported.returncode == 0, exported.stderr
    rows = [json.loads(line) for line in exported.stdout.splitlines() if line.strip()]
    return sorted((row["_id"], row["text"], json.dumps(row["meta"]["regions"])) for row in rows)


def count(summary: str, label: str) -> int:
    found = re.search(rf"^\s+{label}\s+(\d+)", summary, re.MULTILINE)
    assert found is not None, summary
    return int(found.group(1))


def test_scans_indexed_by_two_ocr_workers_give_the_chunks_in_process_ocr_gives(
    tmp_path: Path,
) -> None:
    folder = scans(tmp_path / "scans")
    pooled = rcpkit(
        "index", str(folder), "--index", str(tmp_path / "pooled"), *HASHING, "--ocr-workers", "2"
    )
    assert pooled.returncode == 0, pooled.stderr
    assert "ocr 3/3" in pooled.stderr  # the pool's progress counter, to the end
    inline = rcpkit(
        "index", str(folder), "--index", str(tmp_path / "inline"), *HASHING, "--ocr-workers", "0"
    )
    assert inline.returncode == 0, inline.stderr
    assert "ocr " not in inline.stderr  # no pool ran
    got = documents(tmp_path / "pooled")
    assert got == documents(tmp_path / "inline")
    assert count(pooled.stdout, "total") == count(inline.stdout, "total") == 3
    # Chunk counts, not the summary's rate ("embedded 5.7 chunks/s"), which differs run to run.
    counts = r"(?<![\d.])(\d+) chunks(?!/)"
    assert re.findall(counts, pooled.stdout) == re.findall(counts, inline.stdout)
    assert {doc for doc, _, _ in got} == {"wing.png", "shock.png", "scanned.pdf"}
    text = " ".join(text for _, text, _ in got).casefold()
    for word in ("swept", "tunnel", "supersonic", "blunt", "laminar"):
        assert word in text


def test_an_image_that_breaks_the_decoder_is_one_skip_and_the_batch_is_kept(
    tmp_path: Path,
) -> None:
    from PIL import Image

    folder = scans(tmp_path / "scans")
    # 20,000 x 20,000 one-bit pixels: a few kB of PNG, over Pillow's pixel limit.
    bomb = io.BytesIO()
    Image.new("1", (20_000, 20_000), 1).save(bomb, format="PNG")
    (folder / "bomb.png").write_bytes(bomb.getvalue())
    (folder / "torn.png").write_bytes((folder / "wing.png").read_bytes()[:300])
    done = rcpkit(
        "index", str(folder), "--index", str(tmp_path / "idx"), *HASHING, "--ocr-workers", "2",
        "--show-skipped",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "bomb.png" in done.stdout and "decompression bomb" in done.stdout
    assert "torn.png" in done.stdout and "unreadable image" in done.stdout
    assert {doc for doc, _, _ in documents(tmp_path / "idx")} == {
        "wing.png",
        "shock.png",
        "scanned.pdf",
    }


def test_ocr_workers_must_not_be_negative(tmp_path: Path) -> None:
    done = rcpkit("index", str(tmp_path), "--index", str(tmp_path / "i"), "--ocr-workers", "-1")
    assert done.returncode != 0
    assert "--ocr-workers" in done.stderr
