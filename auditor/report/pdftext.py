"""The text a PDF's pages show, read with pyHanko's parser: what `verify` compares the
embedded files with.

The digests a reader of the report sees are the ones drawn on its pages, so they are
read from the pages' content streams (each font's ToUnicode map turns the glyph codes
back into characters), not from the HTML twin or a metadata field that no reader sees.
This covers what the report's renderer writes (text shown with Tj and TJ, in fonts
with a ToUnicode map); it is no general text extractor, and it needs no program
outside the Python environment.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_HEX = rb"<([0-9A-Fa-f\s]+)>"
_BFCHAR = re.compile(rb"beginbfchar(.*?)endbfchar", re.S)
_BFRANGE = re.compile(rb"beginbfrange(.*?)endbfrange", re.S)
_PAIR = re.compile(_HEX + rb"\s*" + _HEX)
_RANGE = re.compile(_HEX + rb"\s*" + _HEX + rb"\s*(?:" + _HEX + rb"|\[([^\]]*)\])")
UNMAPPED = "\ufffd"


def _get(dictionary, key: str, default=None):
    """A dictionary's value, followed if indirect (pyHanko's `get` leaves it indirect)."""
    try:
        return dictionary[key]
    except KeyError:
        return default


def _hex(raw: bytes) -> bytes:
    return bytes.fromhex(re.sub(rb"\s", b"", raw).decode())


def _utf16(raw: bytes) -> str:
    return _hex(raw).decode("utf-16-be", errors="replace")


def to_unicode_map(cmap: bytes) -> dict[bytes, str]:
    """Character codes to text, from a ToUnicode CMap's bfchar and bfrange entries."""
    mapping: dict[bytes, str] = {}
    for block in _BFCHAR.findall(cmap):
        for code, text in _PAIR.findall(block):
            mapping[_hex(code)] = _utf16(text)
    for block in _BFRANGE.findall(cmap):
        for low, high, start, listed in _RANGE.findall(block):
            lo, hi = _hex(low), _hex(high)
            first, last = int.from_bytes(lo, "big"), int.from_bytes(hi, "big")
            texts = [_utf16(t) for t in re.findall(_HEX, listed)] if listed else None
            base = _utf16(start) if start else ""
            for i, code in enumerate(range(first, last + 1)):
                key = code.to_bytes(len(lo), "big")
                if texts is not None:
                    if i < len(texts):
                        mapping[key] = texts[i]
                elif base:
                    mapping[key] = base[:-1] + chr(ord(base[-1]) + i)
    return mapping


class _Font:
    """How one font's codes read: their width in bytes and their text."""

    def __init__(self, font) -> None:
        self.width = 2 if _get(font, "/Subtype") == "/Type0" else 1
        cmap = _get(font, "/ToUnicode")
        self.map = to_unicode_map(cmap.data) if cmap is not None else {}

    def text(self, raw: bytes) -> str:
        w = self.width
        return "".join(self.map.get(raw[i : i + w], UNMAPPED) for i in range(0, len(raw), w))


def _pages(node, resources=None) -> Iterator[tuple]:
    """Each page with the resources it uses (inherited from its page tree if need be)."""
    resources = _get(node, "/Resources", resources)
    if _get(node, "/Type") == "/Pages":
        for kid in node["/Kids"]:
            yield from _pages(kid.get_object(), resources)
    else:
        yield node, resources


_TOKEN = re.compile(
    rb"""\s+|%[^\r\n]*
    |(?P<dict><<|>>)
    |(?P<hex><[0-9A-Fa-f\s]*>)
    |(?P<open>\[)|(?P<close>\])
    |(?P<lit>\()
    |(?P<name>/[^\s()<>\[\]{}/%]*)
    |(?P<num>[+-]?(?:\d+\.?\d*|\.\d+))
    |(?P<op>[^\s()<>\[\]{}/%]+)""",
    re.X,
)
_ESCAPES = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"b": b"\b", b"f": b"\f"}


def _literal(data: bytes, pos: int) -> tuple[bytes, int]:
    """A literal (string) starting after its "(", and where it ends."""
    out, depth = bytearray(), 1
    while pos < len(data):
        ch = data[pos : pos + 1]
        pos += 1
        if ch == b"\\":
            nxt = data[pos : pos + 1]
            octal = re.match(rb"[0-7]{1,3}", data[pos : pos + 3])
            if octal:
                out.append(int(octal.group(), 8) & 0xFF)
                pos += len(octal.group())
            elif nxt in (b"\r", b"\n"):
                pos += 1
            else:
                out += _ESCAPES.get(nxt, nxt)
                pos += 1
            continue
        depth += {b"(": 1, b")": -1}.get(ch, 0)
        if depth == 0:
            break
        out += ch
    return bytes(out), pos


def _operations(data: bytes) -> Iterator[tuple[bytes, list]]:
    """(operator, operands) of a content stream: strings as bytes, numbers as floats,
    names as text ("/F1"), arrays as lists."""
    stack: list = []
    arrays: list[list] = []
    pos = 0
    while pos < len(data):
        m = _TOKEN.match(data, pos)
        if m is None:  # a stray delimiter: skip it
            pos += 1
            continue
        pos = m.end()
        kind = m.lastgroup
        if kind is None or kind == "dict":
            continue
        if kind == "open":
            arrays.append([])
            continue
        if kind == "close":
            done = arrays.pop() if arrays else []
            (arrays[-1] if arrays else stack).append(done)
            continue
        if kind == "lit":
            value, pos = _literal(data, pos)
        elif kind == "hex":
            digits = re.sub(rb"\s", b"", m.group()[1:-1])
            value = _hex(digits + b"0" * (len(digits) % 2))
        elif kind == "num":
            value = float(m.group())
        elif kind == "op" and not arrays:
            if m.group() == b"BI":  # an inline image: its data is no text
                end = re.compile(rb"\sEI(?=\s|$)").search(data, pos)
                pos = end.end() if end else len(data)
            yield m.group(), stack
            stack = []
            continue
        else:  # a name, or an operator inside an array: kept as text, not as a string
            value = m.group().decode("latin-1")
        (arrays[-1] if arrays else stack).append(value)


def _streams(page) -> list:
    contents = _get(page, "/Contents")
    if contents is None:
        return []
    if isinstance(contents, list):
        return [c.get_object() if hasattr(c, "get_object") else c for c in contents]
    return [contents]


def _runs(page, resources, fonts: dict) -> Iterator[str]:
    from pyhanko.pdf_utils import generic

    font_dict = _get(resources, "/Font", {}) if resources is not None else {}
    font = None
    data = b"\n".join(stream.data for stream in _streams(page))
    for op, args in _operations(data):
        if op == b"Tf" and args:
            name = args[0]
            ref = font_dict.raw_get(name) if name in font_dict else None
            if ref is None:
                font = None
                continue
            key = ref.idnum if isinstance(ref, generic.IndirectObject) else id(ref)
            if key not in fonts:
                fonts[key] = _Font(ref.get_object())
            font = fonts[key]
        elif op in (b"TJ", b"Tj", b"'", b'"') and args and font is not None:
            shown = args[0] if op == b"TJ" else args[-1]
            items = shown if isinstance(shown, list) else [shown]
            yield "".join(font.text(s) for s in items if isinstance(s, bytes))


def page_texts(reader) -> Iterator[str]:
    """The text of each page of a pyHanko PdfFileReader, in order: its runs of text, one
    space between them."""
    fonts: dict = {}
    for page, resources in _pages(reader.root["/Pages"]):
        yield " ".join(_runs(page, resources, fonts))
