"""The user's files, read one way: UTF-8 text and strict YAML.

Every local file a user hands skadapt (recipes, suites, data files, corpora, prompt templates) is read here
or through a reader that uses it:

- :func:`read_text` and :func:`text_lines`: UTF-8, a leading byte-order mark skipped; a file in another
  encoding (cp1250 from Excel or Windows in Central Europe) is refused naming ``file:line`` and the fix,
  instead of a bare ``UnicodeDecodeError`` or text read wrong;
- :func:`load_yaml`: ``yaml.safe_load`` that refuses a mapping with a key given twice (a recipe is strict:
  PyYAML would keep the last value silently), naming both lines.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from skadapt.errors import SkadaptError

ENCODING = "utf-8-sig"
"""UTF-8, with the byte-order mark some editors (Notepad, Excel's "CSV UTF-8") write skipped."""
RESAVE = "re-save it as UTF-8, e.g. `iconv -f cp1250 -t utf-8 {path} > {fixed}` (cp1250: Windows/Excel)"
"""The fix a non-UTF-8 file is refused with."""


class NotUtf8Error(SkadaptError, ValueError):
    """A user's text file that is not UTF-8; the message names ``file:line`` and how to re-save it."""


class DuplicateKeyError(SkadaptError, ValueError):
    """A YAML mapping with a key given twice: the message names the key and both lines, ``line`` is the
    second one (the caller names the file: ``recipe.yaml:7: key 'seed' is given twice ...``)."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def not_utf8(path: str | Path) -> str | None:
    """Why ``path`` is not UTF-8 text, or None when it is: where (``file:line``, the byte and its column,
    found by reading it as bytes, line by line), what and the fix. Readers call it when a decode failed."""
    path = Path(path)
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            try:
                raw.decode(ENCODING if number == 1 else "utf-8")
            except UnicodeDecodeError as error:
                column = len(raw[: error.start].decode("utf-8", errors="replace")) + 1
                fixed = path.with_name(f"{path.stem}.utf8{path.suffix}")
                return (
                    f"{path}:{number}: not UTF-8 text (byte 0x{raw[error.start]:02x} at column {column}); "
                    + RESAVE.format(path=path, fixed=fixed)
                )
    return None


def read_text(path: str | Path, *, error: type[Exception] = NotUtf8Error) -> str:
    """The text of a user's file (UTF-8, a BOM skipped).

    Raises:
        error: The file is not UTF-8 (:func:`not_utf8`'s message).
    """
    try:
        return Path(path).read_text(encoding=ENCODING)
    except UnicodeDecodeError as decoding:
        raise error(not_utf8(path) or f"{path}: {decoding}") from None


def text_lines(path: str | Path, *, error: type[Exception] = NotUtf8Error) -> Iterator[str]:
    """The lines of a user's file as text mode reads them (newlines kept), streamed.

    Raises:
        error: The file is not UTF-8 (:func:`not_utf8`'s message), when the read reaches it.
    """
    try:
        with Path(path).open(encoding=ENCODING) as handle:
            yield from handle
    except UnicodeDecodeError as decoding:
        raise error(not_utf8(path) or f"{path}: {decoding}") from None


class _StrictLoader(yaml.SafeLoader):
    """The safe loader, refusing a key given twice in one mapping (at any depth)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # ``<<: *base``: its keys may be overridden
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: the base loader says so
                break
            if first is not None:
                message = f"key {key!r} is given twice (lines {first} and {line}); keep one"
                raise DuplicateKeyError(message, line)
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``, refusing a mapping with a key given twice.

    Raises:
        yaml.YAMLError: Not valid YAML.
        DuplicateKeyError: A key given twice in one mapping (the caller names the file and its ``line``).
    """
    return yaml.load(text, Loader=_StrictLoader)  # a SafeLoader
