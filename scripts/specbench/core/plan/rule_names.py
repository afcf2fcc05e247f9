"""The names of the workflow's rules that the package uses (rules/*.smk defines the rules, profiles/ sets their
resources), each spelled here once, as a string constant; the tuples and mappings below are made of them."""

from __future__ import annotations

# llama.cpp (rules/llama_cpp.smk) and vLLM's environment (rules/vllm.smk)
LLAMA_CPP_FETCH = "llama_cpp_fetch"
LLAMA_CPP_SOURCE = "llama_cpp_source"
LLAMA_CPP_BUILD = "llama_cpp_build"
VLLM_ENV = "vllm_env"

# The models and the tasks' data (rules/models.smk, rules/tasks.smk)
HF_DOWNLOAD = "hf_download"
MODEL_WHEEL = "model_wheel"
TINY_TARGET_CHECKPOINT = "tiny_target_checkpoint"
TINY_DRAFT_CHECKPOINT = "tiny_draft_checkpoint"
TINY_CHECKPOINT = {"target": TINY_TARGET_CHECKPOINT, "draft": TINY_DRAFT_CHECKPOINT}
CONVERT_TARGET = "convert_target"
CONVERT_DRAFT = "convert_draft"
QUANTIZE_TARGET = "quantize_target"
HF_DATASET = "hf_dataset"
PROMPT_SET = "prompt_set"

# The cell rules (rules/cells.smk), each with what one server of it answers (a record's server.scope): one cell, a
# task's repeats at one temperature, or every selected cell of the condition
CELL = "cell"
CELL_SEQUENCE = "cell_sequence"
CONDITION_SEQUENCE = "condition_sequence"
SCOPE_OF_CELL_RULE = {CELL: "fresh", CELL_SEQUENCE: "task", CONDITION_SEQUENCE: "condition"}

# The explanations (rules/explain.smk): each starts a server of the baseline's setup
EXPLAIN_DIVERGENCE = "explain_divergence"
EXPLAIN_CONTROL = "explain_control"

# The rules whose jobs start a server (llama-server or vLLM)
SERVER_RULES = (CELL, CELL_SEQUENCE, CONDITION_SEQUENCE, EXPLAIN_DIVERGENCE, EXPLAIN_CONTROL)
# The rules that run on every CPU when run locally, whatever --cores says (their resource 'cpus')
EVERY_CPU_RULES = (LLAMA_CPP_BUILD, QUANTIZE_TARGET)
# What needs the machine to itself: a timed server, or every CPU. The default profile gives each of these the whole
# of its global resource machine_share, every other job one unit of it.
ALONE_RULES = (*SERVER_RULES, *EVERY_CPU_RULES)
