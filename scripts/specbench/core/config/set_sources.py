"""The public prompt sets a config can take its tasks from (``tasks: {from: ...}``): where each is published, under
which licence, its categories as task names, and which of them ask a second turn (SPEED-Bench marks its multi-turn
rows one by one: none of its second turns is asked)."""

from __future__ import annotations

from dataclasses import dataclass

MT_BENCH_CATEGORIES = ("writing", "roleplay", "reasoning", "math", "coding", "extraction", "stem", "humanities")


@dataclass(frozen=True)
class SetSource:
    """One public prompt set: a file in a Git repository at a commit, or a Hub dataset's files at a revision."""

    name: str
    kind: str  # "git-file" | "hf-dataset"
    repo: str
    files: str  # git-file: the path in the repository; hf-dataset: the glob of its data files
    licence: str
    url: str
    categories: tuple[str, ...]  # as task names, in the set's order
    second_turns: tuple[str, ...] = ()  # the categories whose every question has a second turn


SOURCES: dict[str, SetSource] = {
    s.name: s
    for s in (
        SetSource(
            "spec-bench",
            "git-file",
            "hemingkx/Spec-Bench",
            "data/spec_bench/question.jsonl",
            "Apache-2.0",
            "https://github.com/hemingkx/Spec-Bench",
            (*MT_BENCH_CATEGORIES, "translation", "summarization", "qa", "math_reasoning", "rag"),
            MT_BENCH_CATEGORIES,
        ),
        SetSource(
            "speed-bench",
            "hf-dataset",
            "nvidia/SPEED-Bench",
            "qualitative/test-*.parquet",
            "NVIDIA Evaluation Dataset License",
            "https://huggingface.co/datasets/nvidia/SPEED-Bench",
            # as NVIDIA's AIPerf documentation lists them (alphabetical: the file's own order was not seen)
            (
                "coding",
                "humanities",
                "math",
                "multilingual",
                "qa",
                "rag",
                "reasoning",
                "roleplay",
                "stem",
                "summarization",
                "writing",
            ),
        ),
        SetSource(
            "mt-bench",
            "hf-dataset",
            "HuggingFaceH4/mt_bench_prompts",
            "data/train-*.parquet",
            "Apache-2.0",
            "https://huggingface.co/datasets/HuggingFaceH4/mt_bench_prompts",
            MT_BENCH_CATEGORIES,
            MT_BENCH_CATEGORIES,
        ),
    )
}
