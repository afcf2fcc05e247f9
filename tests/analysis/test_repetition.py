"""Where a response's text could have been drafted from (specbench.analysis.repetition): copied from the prompt, or
repeated from the response's own earlier text."""

from __future__ import annotations

import pytest

from specbench.analysis.repetition import text_sources

MODULE = "".join(f"def f{i}(x):\n    return x * {i} + {i * 7} - len(str(x))\n\n" for i in range(12))
PROMPT = f"<|im_start|>user\nRewrite this module with type hints:\n{MODULE}<|im_end|>\n<|im_start|>assistant\n"


def test_a_response_that_copies_the_file_is_text_from_the_prompt() -> None:
    response = "Here it is:\n" + MODULE.replace("(x):", "(x: int) -> int:")
    shares = text_sources(PROMPT, response)
    # the bodies are copied; the new signatures are not in the prompt, but repeat one another letter for letter
    # ('(x: int) -> int:\n    return x * ' is 32 characters): that part is the model's own repetition
    assert shares["from_prompt"] == pytest.approx(0.760, abs=0.001)
    assert shares["from_output"] == pytest.approx(0.195, abs=0.001)


def test_a_response_that_loops_is_repeated_text_not_the_prompt() -> None:
    loop = '\n    "A-100",'  # what SmolLM2-135M wrote into the inventory module
    response = "items = [" + loop * 80
    shares = text_sources(PROMPT, response)
    assert shares["from_prompt"] == 0.0
    # all but the opening and the loop's first pass (the spans from there on occurred one pass earlier)
    assert shares["from_output"] == pytest.approx(1 - (len("items = [") + len(loop)) / len(response))


def test_a_copy_repeated_counts_once_as_copied() -> None:
    response = MODULE + MODULE  # the second pass occurs in the prompt too: it is text the prompt holds
    shares = text_sources(PROMPT, response)
    assert shares["from_prompt"] == 1.0 and shares["from_output"] == 0.0


def test_new_text_is_neither_and_a_short_answer_is_not_judged() -> None:
    essay = (
        "Bicycles changed how towns grew: a worker could live farther from the mill, and roads were paved "
        "for riders before cars. Women rode in bloomers, and the safety bicycle of 1885 made it easy."
    )
    assert text_sources(PROMPT, essay) == {"from_prompt": 0.0, "from_output": 0.0}
    assert text_sources(PROMPT, "42") == {"from_prompt": None, "from_output": None}
