"""Read a GGUF's header (metadata and tensor table) without building its array payloads or touching tensor data:
the ``gguf`` package's reader makes a numpy view of every token of a 248k-token vocabulary, this walks past them."""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass
from math import prod
from pathlib import Path
from typing import Any, NamedTuple

from gguf import (
    GGML_QUANT_SIZES,
    GGUF_DEFAULT_ALIGNMENT,
    GGUF_MAGIC,
    GGUF_VERSION,
    GGMLQuantizationType,
    GGUFValueType,
    Keys,
)

SUPPORTED_VERSIONS = (2, GGUF_VERSION)
_ALIGNMENT_KEY = Keys.General.ALIGNMENT
_SCALAR_FORMATS = {
    GGUFValueType.UINT8: "B",
    GGUFValueType.INT8: "b",
    GGUFValueType.UINT16: "H",
    GGUFValueType.INT16: "h",
    GGUFValueType.UINT32: "I",
    GGUFValueType.INT32: "i",
    GGUFValueType.FLOAT32: "f",
    GGUFValueType.BOOL: "?",
    GGUFValueType.UINT64: "Q",
    GGUFValueType.INT64: "q",
    GGUFValueType.FLOAT64: "d",
}


class GGUFHeaderError(ValueError):
    """The file is not a GGUF this reader can read: bad magic, unsupported version, or a damaged header."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


SMALL_ARRAY = 64  # numeric arrays up to this length keep their elements (a draft's target layers); longer are skipped


class GGUFArray(NamedTuple):
    """A metadata array, as its element type and length; a short numeric one's elements too (None: skipped)."""

    element_type: GGUFValueType
    length: int
    items: tuple[Any, ...] | None = None


class GGUFField(NamedTuple):
    """One metadata key's value type and value: an int, float, bool or str, or a GGUFArray."""

    type: GGUFValueType
    value: Any


class GGUFTensor(NamedTuple):
    """One tensor table entry; ``shape`` in the file's order (innermost dimension first), ``data_offset`` absolute."""

    name: str
    shape: tuple[int, ...]
    ggml_type: GGMLQuantizationType
    data_offset: int

    @property
    def n_elements(self) -> int:
        return prod(self.shape)

    @property
    def n_bytes(self) -> int:
        block_size, type_size = GGML_QUANT_SIZES[self.ggml_type]
        return self.n_elements * type_size // block_size


@dataclass(frozen=True)
class GGUFHeader:
    """A GGUF's version, metadata, tensor table, alignment and where its tensor data starts."""

    version: int
    fields: dict[str, GGUFField]
    tensors: list[GGUFTensor]
    alignment: int
    data_offset: int

    def value(self, key: str) -> Any:
        """The key's value (a GGUFArray for an array), None when the file has no such key."""
        field = self.fields.get(key)
        return field.value if field is not None else None


class _Cursor:
    """Reads a buffer front to back in one byte order; running past its end raises GGUFHeaderError."""

    def __init__(self, path: Path, buffer: memoryview, order: str) -> None:
        self.path, self.buffer, self.order, self.pos = path, buffer, order, 0
        self._u64 = struct.Struct(order + "Q")

    def fail(self, reason: str) -> GGUFHeaderError:
        return GGUFHeaderError(self.path, reason)

    def need(self, n_bytes: int, what: str) -> None:
        if self.pos + n_bytes > len(self.buffer):
            raise self.fail(
                f"the header runs past the end of the file ({what} at byte {self.pos} needs {n_bytes} bytes, "
                f"the file has {len(self.buffer)})"
            )

    def scalar(self, fmt: str, what: str) -> Any:
        size = struct.calcsize(fmt)
        self.need(size, what)
        (value,) = struct.unpack_from(self.order + fmt, self.buffer, self.pos)
        self.pos += size
        return value

    def string(self, what: str) -> str:
        length = self.scalar("Q", what)
        self.need(length, what)
        raw = bytes(self.buffer[self.pos : self.pos + length])
        self.pos += length
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self.fail(f"{what} at byte {self.pos - length} is not UTF-8") from None

    def value_type(self, what: str) -> GGUFValueType:
        raw = self.scalar("I", what)
        try:
            return GGUFValueType(raw)
        except ValueError:
            raise self.fail(f"{what} has an unknown value type {raw}") from None

    def skip_strings(self, count: int, what: str) -> None:
        """Step over ``count`` length-prefixed strings, reading only their lengths."""
        buffer, pos, length_of = self.buffer, self.pos, self._u64.unpack_from
        try:
            for _ in range(count):
                pos += 8 + length_of(buffer, pos)[0]
        except struct.error:  # a length that cannot be read: the strings run past the end
            self.pos = pos
            self.need(8, what)
        self.pos = pos
        self.need(0, what)

    def value(self, value_type: GGUFValueType, what: str) -> Any:
        if value_type == GGUFValueType.STRING:
            return self.string(what)
        if value_type == GGUFValueType.ARRAY:
            element_type = self.value_type(what)
            length = self.scalar("Q", what)
            if element_type in _SCALAR_FORMATS and length <= SMALL_ARRAY:
                items = tuple(self.scalar(_SCALAR_FORMATS[element_type], what) for _ in range(length))
                return GGUFArray(element_type, length, items)
            self.skip_array(element_type, length, what)
            return GGUFArray(element_type, length)
        return self.scalar(_SCALAR_FORMATS[value_type], what)

    def skip_array(self, element_type: GGUFValueType, length: int, what: str) -> None:
        if element_type == GGUFValueType.STRING:
            self.skip_strings(length, what)
        elif element_type == GGUFValueType.ARRAY:
            for _ in range(length):
                self.value(GGUFValueType.ARRAY, what)
        else:
            size = struct.calcsize(_SCALAR_FORMATS[element_type]) * length
            self.need(size, what)
            self.pos += size


def _byte_order(path: Path, buffer: memoryview) -> str:
    """'<' or '>': the file's byte order, told by its version field (a small number, so its high half is zero)."""
    if len(buffer) < 8:
        raise GGUFHeaderError(path, f"the file has {len(buffer)} bytes, too few for a GGUF header")
    (magic,) = struct.unpack_from("<I", buffer, 0)
    if magic != GGUF_MAGIC:
        raise GGUFHeaderError(path, f"bad magic {bytes(buffer[:4])!r}, expected b'GGUF'")
    (version,) = struct.unpack_from("<I", buffer, 4)
    return ">" if version & 0xFFFF == 0 else "<"


def _parse(path: Path, buffer: memoryview) -> GGUFHeader:
    cursor = _Cursor(path, buffer, _byte_order(path, buffer))
    cursor.pos = 4
    version = cursor.scalar("I", "the version")
    if version not in SUPPORTED_VERSIONS:
        raise cursor.fail(f"GGUF version {version} is not supported (only {', '.join(map(str, SUPPORTED_VERSIONS))})")
    tensor_count = cursor.scalar("Q", "the tensor count")
    kv_count = cursor.scalar("Q", "the metadata count")
    fields: dict[str, GGUFField] = {}
    for index in range(kv_count):
        key = cursor.string(f"metadata key {index}")
        value_type = cursor.value_type(f"metadata '{key}'")
        if key in fields:
            raise cursor.fail(f"metadata key '{key}' appears twice")
        fields[key] = GGUFField(value_type, cursor.value(value_type, f"metadata '{key}'"))
    entries = []
    for index in range(tensor_count):
        name = cursor.string(f"tensor {index}'s name")
        n_dims = cursor.scalar("I", f"tensor '{name}'")
        shape = tuple(cursor.scalar("Q", f"tensor '{name}'") for _ in range(n_dims))
        raw_type = cursor.scalar("I", f"tensor '{name}'")
        offset = cursor.scalar("Q", f"tensor '{name}'")
        try:
            ggml_type = GGMLQuantizationType(raw_type)
        except ValueError:
            raise cursor.fail(f"tensor '{name}' has an unknown ggml type {raw_type}") from None
        entries.append((name, shape, ggml_type, offset))
    alignment = _alignment(cursor, fields.get(_ALIGNMENT_KEY))
    data_offset = -(-cursor.pos // alignment) * alignment
    tensors = [GGUFTensor(name, shape, kind, data_offset + offset) for name, shape, kind, offset in entries]
    names = [tensor.name for tensor in tensors]
    if len(set(names)) != len(names):
        duplicate = next(name for name in names if names.count(name) > 1)
        raise cursor.fail(f"tensor '{duplicate}' appears twice")
    return GGUFHeader(version, fields, tensors, alignment, data_offset)


def _alignment(cursor: _Cursor, field: GGUFField | None) -> int:
    if field is None:
        return GGUF_DEFAULT_ALIGNMENT
    if field.type != GGUFValueType.UINT32:
        raise cursor.fail(f"{_ALIGNMENT_KEY} is a {field.type.name}, expected UINT32")
    if field.value <= 0 or field.value & (field.value - 1):
        raise cursor.fail(f"{_ALIGNMENT_KEY} is {field.value}, expected a power of two")
    return field.value


def read_gguf_header(path: Path) -> GGUFHeader:
    """The header of the GGUF at ``path``; GGUFHeaderError when it is not a readable GGUF header."""
    with path.open("rb") as file:
        if os.fstat(file.fileno()).st_size == 0:
            raise GGUFHeaderError(path, "the file is empty")
        with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as mapped, memoryview(mapped) as buffer:
            return _parse(path, buffer)
