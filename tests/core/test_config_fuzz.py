"""Bad input: configs and claims files mutated at random (hypothesis) either validate or fail with an error that
names the key; names with shell metacharacters are refused; no command line is ever built as a shell string;
prompt templates with literal braces work, empty or non-UTF-8 ones are refused before any job."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from snakemake.utils import update_config

from specbench.claims.claim import ClaimError
from specbench.claims.claims_file import parse_claims
from specbench.core.config.error import ConfigError
from specbench.core.config.load import validate_config
from specbench.core.config.templates import fill_template, template_fields
from specbench.tasks.render import render_prompt
from support.paths import REPO

STUDY = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
TINY = copy.deepcopy(STUDY)
update_config(TINY, yaml.safe_load((REPO / "config" / "tiny.yaml").read_text()))
CLAIMS = yaml.safe_load((REPO / "config" / "claims.yaml").read_text())["claims"]
SCHEMA_KEYS = set(yaml.safe_load((REPO / "config" / "schema.yaml").read_text())["properties"])
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-10, 10**6),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.sampled_from(["", "off", "mtp", "../x", "a;b", "$(id)", "{draft}"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=6,
)


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key path into a nested dict/list document."""
    found = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*prefix, index))
    return found


def _mutate(document: Any, data: st.DataObject) -> tuple[Any, tuple]:
    """A copy of ``document`` with one key deleted, one value replaced, or one unknown key added."""
    document = copy.deepcopy(document)
    path = data.draw(st.sampled_from(_paths(document)), label="path")
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    op = data.draw(st.sampled_from(["delete", "replace", "add"]), label="op")
    if op == "delete":
        del parent[path[-1]]
    elif op == "replace":
        parent[path[-1]] = data.draw(values, label="value")
    elif isinstance(parent, dict):
        parent[data.draw(st.text(min_size=1, max_size=8), label="new key")] = data.draw(values, label="value")
    else:
        parent.append(data.draw(values, label="value"))
    return document, path


@FUZZ
@given(data=st.data(), base=st.sampled_from([STUDY, TINY]))
def test_mutated_configs_validate_or_name_the_key(data: st.DataObject, base: dict) -> None:
    config, _path = _mutate(base, data)
    try:
        validate_config(config, REPO)
    except ConfigError as error:
        assert str(error).startswith(f"config error at '{error.key}': ")
        assert error.key and error.problem
        # a key path joins its parts with '.'; a top-level key may itself hold one (hypothesis once added '.')
        assert (
            error.key == "<top level>"
            or error.key in set(config)
            or error.key.split(".")[0] in SCHEMA_KEYS | set(config)
        ), error.key


@FUZZ
@given(data=st.data())
def test_mutated_claims_validate_or_name_the_claim_and_key(data: st.DataObject) -> None:
    config = validate_config(copy.deepcopy(STUDY), REPO)
    entries, _path = _mutate(CLAIMS, data)
    try:
        parse_claims(entries, config)
    except ClaimError as error:
        assert re.match(r"claims: (claim ('[^']*'|#\d+)(: key '[^']+')?|expected a mapping)", str(error)), str(error)


@pytest.mark.parametrize(
    "name", ["a;rm -rf ~", "$(id)", "`id`", "a b", "a|b", "a&b", "a>b", "../x", "A", "-x", "a\nb", "a'b", 'a"b', "a*"]
)
@pytest.mark.parametrize("kind", ["tasks", "conditions"])
def test_names_with_shell_or_path_characters_are_refused(kind: str, name: str) -> None:
    config = copy.deepcopy(STUDY)
    first = next(iter(config[kind]))
    config[kind][name] = config[kind].pop(first)
    config.pop("select", None)
    if kind == "conditions" and first == config.get("baseline"):
        config["baseline"] = name
    with pytest.raises(ConfigError) as caught:
        validate_config(config, REPO)
    assert caught.value.key == kind and "is not valid" in caught.value.problem


def test_no_command_is_built_as_a_shell_string() -> None:
    """Server arguments, names and paths are argv items; nothing is interpolated into a shell command."""
    offenders = []
    sources = [REPO / "Snakefile", *REPO.glob("rules/*.smk"), *REPO.glob("scripts/**/*.py"), *REPO.glob("bench/*.py")]
    for path in sources:
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if re.search(r"shell\s*=\s*True|os\.system\(|os\.popen\(|^\s*shell:", line):
                offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert offenders == []


def _task_config(tmp_path: Path, prompt: bytes) -> dict:
    (tmp_path / "prompt.txt").write_bytes(prompt)
    config = copy.deepcopy(STUDY)
    config["tasks"]["essay"]["prompt"] = str(tmp_path / "prompt.txt")
    return config


def test_literal_braces_in_a_prompt_are_text(tmp_path: Path) -> None:
    template = 'Answer as JSON like {"answer": 42, "steps": [{"n": 1}]}. Keep {{source}} as is.\n\n{source}\n'
    (tmp_path / "in.py").write_text("def f(x): return {x: 1}\n")
    config = _task_config(tmp_path, template.encode())
    config["tasks"]["essay"]["inputs"] = {"source": str(tmp_path / "in.py")}
    validate_config(config, REPO)
    assert template_fields(template) == {"source"}
    manifest = render_prompt("t", tmp_path / "prompt.txt", {"source": tmp_path / "in.py"}, None)
    assert manifest["messages"][0]["content"] == (
        'Answer as JSON like {"answer": 42, "steps": [{"n": 1}]}. Keep {source} as is.\n\ndef f(x): return {x: 1}\n\n'
    )
    assert fill_template("{a}{b}", {"a": "{b}", "b": "x"}) == "{b}x"  # a value is never filled in again


def test_a_placeholder_without_a_value_names_the_task(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        validate_config(_task_config(tmp_path, b"Write about {topic}."), REPO)
    assert caught.value.key == "tasks.essay.inputs" and "['topic']" in caught.value.problem


@pytest.mark.parametrize(
    ("content", "problem"), [(b"", "is empty"), (b"  \n\n", "is empty"), (b"caf\xe9 \xff\xfe", "is not UTF-8 text")]
)
def test_empty_or_non_utf8_prompts_are_refused_before_any_job(tmp_path: Path, content: bytes, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        validate_config(_task_config(tmp_path, content), REPO)
    assert caught.value.key == "tasks.essay.prompt" and problem in caught.value.problem
    assert str(tmp_path / "prompt.txt") in str(caught.value)


def test_a_non_utf8_input_file_names_its_key(tmp_path: Path) -> None:
    config = copy.deepcopy(STUDY)
    (tmp_path / "bad.py").write_bytes(b"\x80\x81")
    config["tasks"]["file-rewrite"]["inputs"]["source"] = str(tmp_path / "bad.py")
    with pytest.raises(ConfigError) as caught:
        validate_config(config, REPO)
    assert caught.value.key == "tasks.file-rewrite.inputs.source" and "is not UTF-8" in caught.value.problem
