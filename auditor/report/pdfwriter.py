"""How the report's PDF is written: pydyf's writer (weasyprint's), faster for a tagged
report and quicker to read back.

A tagged report has tens of thousands of objects (one per structure element), and
pydyf, written for smaller files, takes time in the square of that number twice:

- every structure element names its page, and pydyf rebuilds the list of every page's
  reference each time one is asked for; `RecordPDF` keeps the list until a page is added
  (on a 350-page report, 8 of the 17 s spent writing it);
- it puts every compressible object into one object stream, and a reader that finds an
  object by reading its stream's index from the start, as pyHanko's does, then takes
  time in the square of the file's size: checking a signature that has later revisions
  after it (a second signature) compares them object by object, and took minutes on a
  small report. `RecordPDF.write` is pydyf's `PDF.write` for the compressed case (PDF 1.5
  and later, a cross-reference stream) with the objects in streams of
  OBJECTS_PER_STREAM; the uncompressed case is pydyf's own.

It also leaves out the empty /Pattern and /Shading dictionaries weasyprint puts in every
resource dictionary: they mean nothing, and a PDF/A validator that approves only what it
knows (pikepdf's, made from veraPDF's rules) does not approve them.

weasyprint makes its PDF object itself (`pydyf.PDF()`), so `record_pdf()` has it make a
`RecordPDF` while the report is written, and puts pydyf back after.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from hashlib import md5
from math import ceil, log

import pydyf

OBJECTS_PER_STREAM = 200
EMPTY_WHEN_UNUSED = ("Pattern", "Shading")  # resource kinds weasyprint always writes


def _to_bytes(value) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()


class RecordPDF(pydyf.PDF):
    """A pydyf PDF that keeps its page references, its compressible objects in several
    object streams."""

    @property
    def page_references(self):
        kids = self.pages["Kids"]
        cached = self.__dict__.get("_page_references")
        if cached is None or cached[0] != len(kids):
            refs = tuple(f"{number} 0 R".encode("ascii") for number in kids[::3])
            self._page_references = cached = (len(kids), refs)
        return cached[1]

    def write(self, output, version=b"1.7", identifier=False, compress=False):
        self._drop_empty_resources()
        version = _to_bytes(version or b"1.7")
        if not compress or version < b"1.5":
            return super().write(output, version, identifier, compress)
        if identifier not in (False, True, None):
            identifier = _to_bytes(identifier)
        if self.info:
            self.add_object(self.info)
        self.write_line(b"%PDF-" + version, output)
        self.write_line(b"%\xf0\x9f\x96\xa4", output)

        written = md5()  # the file identifier: a digest of the objects as written
        packed = []
        for obj in self.objects:
            if obj.free == "f":
                continue
            if obj.compressible:
                packed.append(obj)
            else:
                obj.offset = self.current_position
                self._write_object(obj, output, written)
        where = self._write_object_streams(packed, compress, output, written)
        if identifier:
            digest = written.hexdigest().encode()
            identifier = (digest if identifier is True else identifier, digest)
        self._write_xref_stream(where, identifier, compress, output)
        self.write_line(b"startxref", output)
        self.write_line(f"{self.xref_position}".encode(), output)
        self.write_line(b"%%EOF", output)

    def _drop_empty_resources(self) -> None:
        for obj in self.objects:
            if isinstance(obj, dict):  # only resource dictionaries have these keys
                for kind in EMPTY_WHEN_UNUSED:
                    if obj.get(kind) == {}:
                        del obj[kind]

    def _write_object(self, obj, output, written) -> None:
        line = obj.indirect
        written.update(line)
        self.write_line(line, output)

    def _write_object_streams(self, packed: list, compress: bool, output, written) -> dict:
        """Each run of OBJECTS_PER_STREAM objects in a stream of its own; returns where
        each object went: number -> (stream number, index in it)."""
        where = {}
        for start in range(0, len(packed), OBJECTS_PER_STREAM):
            chunk = packed[start : start + OBJECTS_PER_STREAM]
            offsets, bodies, position = [], [], 0
            for obj in chunk:
                data = obj.data
                bodies.append(data)
                offsets += [obj.number, position]
                position += len(data) + 1
            index = " ".join(str(n) for n in offsets)
            extra = {"Type": "/ObjStm", "N": len(chunk), "First": len(index) + 1}
            stream = pydyf.Stream([index, *bodies], extra, compress)
            stream.offset = self.current_position
            self.add_object(stream)
            self._write_object(stream, output, written)
            for i, obj in enumerate(chunk):
                where[obj.number] = (stream.number, i)
        return where

    def _write_xref_stream(self, where: dict, identifier, compress: bool, output) -> None:
        """The cross-reference stream; `identifier` the file's two ids, or None."""
        xref = [
            (2, *where[obj.number])
            if obj.number in where
            else (int(bool(obj.number)), obj.offset, obj.generation)
            for obj in self.objects
        ]
        xref.append((1, self.current_position, 0))  # the cross-reference stream itself
        field2 = ceil(log(self.current_position + 1, 256))
        largest = max(max(obj.generation for obj in self.objects), OBJECTS_PER_STREAM)
        widths = (1, field2, ceil(log(largest + 1, 256)))
        table = b"".join(
            value.to_bytes(width, "big")
            for line in xref
            for width, value in zip(widths, line, strict=True)
        )
        extra = {
            "Type": "/XRef",
            "Index": pydyf.Array((0, len(self.objects) + 1)),
            "W": pydyf.Array(widths),
            "Size": len(self.objects) + 1,
            "Root": self.catalog.reference,
        }
        if self.info:
            extra["Info"] = self.info.reference
        if identifier:
            extra["ID"] = pydyf.Array(tuple(pydyf.String(part).data for part in identifier))
        xref_stream = pydyf.Stream([table], extra, compress)
        self.xref_position = xref_stream.offset = self.current_position
        self.add_object(xref_stream)
        self.write_line(xref_stream.indirect, output)


@contextmanager
def record_pdf() -> Iterator[None]:
    """While it lasts, pydyf.PDF() (as weasyprint calls it) makes a RecordPDF."""
    original = pydyf.PDF
    pydyf.PDF = RecordPDF
    try:
        yield
    finally:
        pydyf.PDF = original
