"""The workflow's rule names, written once: what the config's resources may name, and which rules measure cells."""

# Every rule of the workflow (rules/*.smk): what resources.rules and resources.local_rules may name.
RULES = (
    "llama_cpp_fetch",
    "llama_cpp_source",
    "llama_cpp_build",
    "llama_cpp_install",
    "hf_download",
    "hf_dataset",
    "model_wheel",
    "tiny_target_checkpoint",
    "tiny_draft_checkpoint",
    "convert_target",
    "convert_draft",
    "quantize_target",
    "verify_model",
    "render_prompt",
    "cell",
    "cell_sequence",
    "condition_sequence",
    "import_cells",
    "record_predictions",
    "condition_setup",
    "code_manifest",
    "explain_divergence",
    "explain_control",
    "aggregate",
    "tables",
    "claims",
    "figures",
    "report",
)
# The cell rules, and what one server of each answers (a record's server.scope): one cell, a task's repeats at one
# temperature, or every selected cell of the condition.
CELL_RULES = {"cell": "fresh", "cell_sequence": "task", "condition_sequence": "condition"}
# The rules that explain a temperature-0 cell's divergence from its reference: each serves the baseline condition
# on the cell's machine, untimed, after the cells (a non-baseline cell against the baseline's same repeat; the
# baseline's later repeats against its first).
EXPLAIN_RULES = ("explain_divergence", "explain_control")
# The rules that run with every CPU when run locally, whatever --cores says: the llama.cpp build and the quantization
# (their resource 'cpus', rules/common.smk).
EVERY_CPU_RULES = ("llama_cpp_build", "quantize_target")
