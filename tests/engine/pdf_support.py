"""PDFs for tests, written by hand: one Helvetica text line per string, a page per list."""

from __future__ import annotations

__all__ = ["build_pdf"]


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _page_objects(lines: list[str], page_id: int) -> list[bytes]:
    resources = "/Resources << /Font << /F1 3 0 R >> >>"
    page = f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] {resources}"
    ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"] + [f"({_escape(x)}) Tj T*" for x in lines]
    stream = "\n".join([*ops, "ET"]).encode() if lines else b""
    return [
        f"{page} /Contents {page_id + 1} 0 R >>".encode(),
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
    ]


def build_pdf(pages: list[list[str]], title: str | None = None) -> bytes:
    """A minimal valid PDF by hand: one Helvetica text line per string, a page per list."""
    page_ids = [4 + 2 * index for index in range(len(pages))]
    kids = " ".join(f"{page_id} 0 R" for page_id in page_ids)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for lines, page_id in zip(pages, page_ids, strict=True):
        objects += _page_objects(lines, page_id)
    info = ""
    if title is not None:
        objects.append(f"<< /Title ({_escape(title)}) >>".encode())
        info = f" /Info {len(objects)} 0 R"
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    trailer = f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{info} >>\nstartxref\n{xref}\n"
    return bytes(out + trailer.encode() + b"%%EOF\n")
