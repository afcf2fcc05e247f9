"""A cell's coordinates, declared once (``COORDINATES``): each one's name, type, default, path segment and whether
the matrix crosses it or a run fixes it per folder. The cell file's pattern, its wildcards' constraints, the path's
parse, the record's ``cell`` section and the tables' coordinate columns are derived from that list (``Layout``).

The task and its prompt share one path component, the prompt key (``<task>`` or ``<task>.<prompt>``, wildcard
``prompt``): the prompt coordinate's segment is empty and the task's segment carries the key."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from specbench.core.config.builds import ONE_BUILD

DEFAULT_MACHINE = "local"  # the machine the workflow runs on, when the config names no machines
ONE_PROMPT = ""  # the prompt coordinate of a task without a prompt set
# A cell without a models folder: the layout of working directories from before it (and of imported cells, whose
# records name their models)
NO_MODELS = ""
NO_LOAD = None  # the concurrency coordinate of a run without a load dimension
KEY_SEPARATOR = "."
REQUIRED = object()  # the default of a coordinate every cell sets


def prompt_key(task: str, prompt: str = ONE_PROMPT) -> str:
    """The path component of a task's prompt: the task's name for its one prompt, else ``<task>.<prompt>``."""
    return f"{task}{KEY_SEPARATOR}{prompt}" if prompt else task


def split_key(key: str) -> tuple[str, str]:
    """(task, prompt) of a prompt key (``prompt_key``'s inverse)."""
    task, _, prompt = key.partition(KEY_SEPARATOR)
    return task, prompt


def format_temperature(value: float) -> str:
    """Temperature as it appears in paths: always with a decimal point (0 -> '0.0', 1 -> '1.0', 0.7 -> '0.7')."""
    text = repr(float(value))
    if "e" in text or "inf" in text or "nan" in text:
        raise ValueError(f"temperature {value!r} cannot be written as a path component")
    return text


@dataclass(frozen=True)
class Coordinate:
    """One coordinate: ``name`` is the Cell's field, the record's key and the table's column; ``parse`` its type
    (from the path's text), ``text`` its path text; ``segment`` its path component (the wildcard ``{<wildcard>}``
    inside, '' where another's segment carries it); ``crossed``: the config crosses it with the others (one value
    per cell), else a run fixes it per folder (the machine, the build, the models); ``optional``: its segment is left
    out where the value is the default (a run without builds, a path without a models folder, a run without a load
    dimension); ``recorded``: the cell record names it (the models folder is the path's alone: the record names the
    models themselves); ``regex``: what its wildcard's text may be when a path is parsed."""

    name: str
    parse: Callable[[str], Any]
    default: Any
    segment: str
    crossed: bool
    optional: bool = False
    recorded: bool = True
    text: Callable[[Any], str] = str
    regex: str = "[^/]+"

    @property
    def wildcard(self) -> str | None:
        """The wildcard its segment holds (None where another coordinate's segment carries it)."""
        found = re.search(r"\{(\w+)\}", self.segment)
        return found.group(1) if found else None


COORDINATES: tuple[Coordinate, ...] = (
    Coordinate("machine", str, DEFAULT_MACHINE, "{machine}", crossed=False),
    Coordinate("build", str, ONE_BUILD, "{build}", crossed=False, optional=True),
    Coordinate("models", str, NO_MODELS, "{models}", crossed=False, optional=True, recorded=False),
    Coordinate("task", str, REQUIRED, "{prompt}", crossed=True),
    Coordinate("prompt", str, ONE_PROMPT, "", crossed=True),
    Coordinate("condition", str, REQUIRED, "{condition}", crossed=True),
    # how many requests the server answers at once (config load.concurrency); None: a run without a load dimension,
    # one request at a time and no such path component (the study's layout)
    Coordinate("concurrency", int, NO_LOAD, "c{concurrency}", crossed=True, optional=True, regex="[0-9]+"),
    Coordinate("temperature", float, REQUIRED, "t{temperature}", crossed=True, text=format_temperature),
    Coordinate("repeat", int, REQUIRED, "r{repeat}", crossed=True),
)


class Layout:
    """The paths of cells with these coordinates (``COORDINATES``, or a list with one more, as a test plans it)."""

    def __init__(self, coordinates: Sequence[Coordinate] = COORDINATES) -> None:
        self.coordinates = tuple(coordinates)
        self.names = [c.name for c in self.coordinates]
        self._by_wildcard = {c.wildcard: c for c in self.coordinates if c.wildcard}

    @property
    def crossed(self) -> list[str]:
        """The coordinates the matrix crosses, in order: the tables' coordinate columns."""
        return [c.name for c in self.coordinates if c.crossed]

    def pattern(self, root: str, present: Sequence[str] = (), suffix: str = ".json") -> str:
        """The path pattern below ``root``: every coordinate's segment, the optional ones only where ``present``
        names them."""
        parts = [c.segment for c in self.coordinates if c.segment and (not c.optional or c.name in present)]
        return f"{root}/{'/'.join(parts)}{suffix}"

    def wildcard_values(self, values: Mapping[str, Any]) -> dict[str, str]:
        """Each wildcard's text for a cell's ``values`` (the prompt key for the task and its prompt)."""
        texts = {c.wildcard: c.text(values[c.name]) for c in self.coordinates if c.wildcard}
        texts["prompt"] = prompt_key(values["task"], values.get("prompt", ONE_PROMPT))
        return texts

    def fill(self, root: str, values: Mapping[str, Any], suffix: str = ".json") -> str:
        """A cell's path below ``root``: with each optional coordinate's segment where its value is not the
        default."""
        present = [c.name for c in self.coordinates if c.optional and values.get(c.name, c.default) != c.default]
        return self.pattern(root, present, suffix).format(**self.wildcard_values(values))

    def partial(self, pattern: str, fixed: Mapping[str, Any], others: str | None = None) -> str:
        """``pattern`` with the coordinates ``fixed`` names filled in, every other wildcard kept (or ``others`` in
        its place: '*' for a glob)."""
        texts = {
            c.wildcard: c.text(fixed[c.name]) if c.name in fixed else others or f"{{{c.wildcard}}}"
            for c in self.coordinates
            if c.wildcard
        }
        return pattern.format(**texts)

    def crossed_path(self, values: Mapping[str, Any], suffix: str = ".json") -> str:
        """A cell's path below its folder (what the crossed coordinates name): ``<prompt>/<condition>/t<t>/r<r>``
        (with ``c<N>`` after the condition in a run with a load dimension)."""
        parts = [
            c.segment
            for c in self.coordinates
            if c.crossed and c.segment and not (c.optional and values.get(c.name, c.default) == c.default)
        ]
        return f"{'/'.join(parts)}{suffix}".format(**self.wildcard_values(values))

    def parse(self, root: str, path: str, suffix: str = ".json") -> dict[str, Any] | None:
        """A cell's values from its path below ``root`` (``fill``'s inverse), or None where it is no such path."""
        optional = [c.name for c in self.coordinates if c.optional]
        # The fullest layout first; of two as full, the one that leaves out the earlier coordinate (a path of one
        # more component than the plainest has a models folder, not a build's)
        for size in range(len(optional), -1, -1):
            for present in reversed(list(itertools.combinations(optional, size))):
                found = self._regex(self.pattern(root, present, suffix)).fullmatch(path)
                if found:
                    return self.from_wildcards(found.groupdict())
        return None

    def _regex(self, pattern: str) -> re.Pattern[str]:
        """``pattern`` as a regex: each wildcard a named group of its coordinate's ``regex``."""

        def group(found: re.Match[str]) -> str:
            coordinate = self._by_wildcard.get(found.group(1))
            return f"(?P<{found.group(1)}>{coordinate.regex if coordinate else '[^/]+'})"

        return re.compile(re.sub(r"\\\{(\w+)\\\}", group, re.escape(pattern)))

    def from_wildcards(self, texts: Mapping[str, str]) -> dict[str, Any]:
        """A cell's values from its wildcards' texts by name (each optional coordinate without one at its default;
        a wildcard that is no coordinate's, e.g. a rule's own, is passed over)."""
        values = {c.name: c.default for c in self.coordinates if c.default is not REQUIRED}
        for wildcard, text in texts.items():
            if wildcard in self._by_wildcard:
                coordinate = self._by_wildcard[wildcard]
                values[coordinate.name] = coordinate.parse(text)
        values["task"], values["prompt"] = split_key(texts["prompt"])
        return values

    def constraints(self, choices: Mapping[str, Sequence[Any]]) -> dict[str, str]:
        """Wildcard regexes that accept only the given values of each coordinate (``choices``: by name; the prompt
        wildcard's are prompt keys)."""
        out = {}
        for coordinate in self.coordinates:
            if coordinate.wildcard and coordinate.wildcard in choices:
                texts = sorted((coordinate.text(v) for v in choices[coordinate.wildcard]), key=len, reverse=True)
                out[coordinate.wildcard] = "|".join(re.escape(t) for t in texts)
        return out

    def record(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The record's ``cell`` section: every recorded coordinate (an optional one only where it is set)."""
        return {
            c.name: values[c.name]
            for c in self.coordinates
            if c.recorded and not (c.optional and values.get(c.name, c.default) == c.default)
        }

    def from_record(self, cell: Mapping[str, Any]) -> dict[str, Any]:
        """The recorded coordinates of a record's ``cell`` section as their types, each absent one at its default (a
        required one absent: KeyError)."""
        return {
            c.name: c.parse(cell[c.name]) if c.name in cell or c.default is REQUIRED else c.default
            for c in self.coordinates
            if c.recorded
        }


LAYOUT = Layout()
