"""The claims judged, as rule claims writes them and the report reads them back: ``results/judged.json`` (schema
``judged``, core.results.documents): the setup they were judged under (each fact of the study's setup beside this
run's), each table of verdicts as columns and rows (core.results.frames), read into DataFrames and plain
dataclasses without the judges."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from specbench.core.results.documents import read_document, write_document
from specbench.core.results.frames import frame_document, frame_of_document
from specbench.core.results.values import from_json, to_json

SCHEMA = "judged"
MODEL_FACT = "model"
GPU_FACT = "GPU"


@dataclass(frozen=True)
class Fact:
    """One fact of the setup: the study's value, this run's, and whether they match."""

    name: str
    study: str
    this_run: str
    matches: bool


@dataclass(frozen=True)
class Comparability:
    """The facts, whether all match, and a short label of the device this run measured on."""

    facts: Sequence[Fact]
    device: str

    @property
    def comparable(self) -> bool:
        return bool(self.facts) and all(f.matches for f in self.facts)

    @property
    def same_model(self) -> bool:
        """The target is the study's model (the claims are about it); hardware, build or flags may still differ."""
        return any(f.name == MODEL_FACT and f.matches for f in self.facts)

    @property
    def same_settings(self) -> bool:
        """Nothing but the GPU differs: the model computes what it computed in the study (acceptance)."""
        return bool(self.facts) and all(f.matches for f in self.facts if f.name != GPU_FACT)

    @property
    def differing(self) -> list[str]:
        return [f.name for f in self.facts if not f.matches]


@dataclass(frozen=True)
class Judged:
    """The claims judged: the setup they were judged under, the study's claims (claims.csv), the predictions and
    their stamp's integrity (None without predictions), and with several machines each one's claims."""

    comparability: Comparability
    claims: pd.DataFrame
    predictions: pd.DataFrame | None = None
    integrity: Mapping[str, Any] | None = None
    machines: Mapping[str, pd.DataFrame] | None = None


def judged_document(judged: Judged) -> dict[str, Any]:
    """``judged`` as JSON-ready data (the ``judged`` schema)."""
    comparability = judged.comparability
    return {
        "comparability": {
            **{
                f.name: to_json(getattr(comparability, f.name))
                for f in dataclasses.fields(comparability)
                if f.name != "facts"
            },
            "facts": [{k: to_json(v) for k, v in dataclasses.asdict(fact).items()} for fact in comparability.facts],
        },
        "claims": frame_document(judged.claims),
        "predictions": None if judged.predictions is None else frame_document(judged.predictions),
        "integrity": None if judged.integrity is None else to_json(dict(judged.integrity)),
        "machines": None
        if judged.machines is None
        else [{"label": label, "claims": frame_document(frame)} for label, frame in judged.machines.items()],
    }


def judged_of(document: Mapping[str, Any]) -> Judged:
    """The judgements ``judged_document`` wrote as ``document``."""
    comparability = document["comparability"]
    facts = [Fact(**{k: from_json(v) for k, v in fact.items()}) for fact in comparability["facts"]]
    others = {k: from_json(v) for k, v in comparability.items() if k != "facts"}
    machines = document["machines"]
    return Judged(
        comparability=Comparability(facts=facts, **others),
        claims=frame_of_document(document["claims"]),
        predictions=None if document["predictions"] is None else frame_of_document(document["predictions"]),
        integrity=None if document["integrity"] is None else from_json(document["integrity"]),
        machines=None if machines is None else {m["label"]: frame_of_document(m["claims"]) for m in machines},
    )


def write_judged(path: Path, judged: Judged) -> None:
    """Write ``judged`` to ``path`` (checked against its schema first), atomically."""
    write_document(path, judged_document(judged), SCHEMA)


def read_judged(path: Path) -> Judged:
    """The judgements ``write_judged`` wrote at ``path`` (checked against the schema)."""
    return judged_of(read_document(path, SCHEMA))
