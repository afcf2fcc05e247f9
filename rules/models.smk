# Model files: Hugging Face snapshot (or local / tiny checkpoint) -> bf16 GGUF with the pinned converter
# -> Q4_K_M with the pinned llama-quantize -> verified manifest. A ready GGUF skips straight to verify.


rule hf_download:
    output:
        directory("resources/models/{role}/hf"),
        manifest="results/models/{role}.download.json",
    log:
        "logs/models/{role}.download.log",
    benchmark:
        "benchmarks/models/{role}.download.tsv"
    retries: 3
    conda:
        "../envs/pipeline.yaml"
    params:
        repo=lambda wc: model_source(wc.role)["repo"],
        revision=lambda wc: model_source(wc.role)["revision"],
    script:
        "../scripts/hf_download.py"


rule tiny_target_checkpoint:
    output:
        directory("resources/models/target/tiny"),
    log:
        "logs/models/target.tiny.log",
    benchmark:
        "benchmarks/models/target.tiny.tsv"
    conda:
        "../envs/convert.yaml"
    params:
        seed=lambda wc: model_source("target").get("seed", 0),
        kind=lambda wc: model_source("target").get("weights", "random"),
    script:
        "../scripts/tiny_checkpoint.py"


rule tiny_draft_checkpoint:
    input:
        target=checkpoint_dir("target"),
    output:
        directory("resources/models/draft/tiny"),
    log:
        "logs/models/draft.tiny.log",
    benchmark:
        "benchmarks/models/draft.tiny.tsv"
    conda:
        "../envs/convert.yaml"
    params:
        seed=lambda wc: model_source("draft").get("seed", 1),
    script:
        "../scripts/tiny_checkpoint.py"


rule convert_target:
    input:
        checkpoint=checkpoint_dir("target"),
        source=LLAMA_SRC_DIR,
    output:
        TARGET_BF16,
    log:
        "logs/models/target.convert.log",
    benchmark:
        "benchmarks/models/target.convert.tsv"
    conda:
        "../envs/convert.yaml"
    params:
        outtype="bf16",
        extra=config["models"]["target"]["convert_args"],
    script:
        "../scripts/convert_to_gguf.py"


rule quantize_target:
    input:
        bf16=TARGET_BF16,
        build=LLAMA_BIN_DIR,
    output:
        TARGET_QUANT,
    log:
        "logs/models/target.quantize.log",
    benchmark:
        "benchmarks/models/target.quantize.tsv"
    conda:
        "../envs/build.yaml"
    threads: workflow.cores
    params:
        quant=config["models"]["target"]["quant"],
    script:
        "../scripts/quantize.py"


rule convert_draft:
    input:
        checkpoint=checkpoint_dir("draft"),
        target=checkpoint_dir("target"),
        source=LLAMA_SRC_DIR,
    output:
        DRAFT_GGUF,
    log:
        "logs/models/draft.convert.log",
    benchmark:
        "benchmarks/models/draft.convert.tsv"
    conda:
        "../envs/convert.yaml"
    params:
        outtype=config["models"].get("draft", {}).get("outtype", "bf16"),
        extra=lambda wc, input: [
            "--target-model-dir",
            input.target,
            *config["models"]["draft"]["convert_args"],
        ],
    script:
        "../scripts/convert_to_gguf.py"


rule verify_model:
    input:
        lambda wc: model_gguf(wc.role),
    output:
        "results/models/{role}.json",
    log:
        "logs/models/{role}.verify.log",
    benchmark:
        "benchmarks/models/{role}.verify.tsv"
    conda:
        "../envs/pipeline.yaml"
    params:
        expected_file_type=lambda wc: expected_file_type(wc.role),
        require_mtp=lambda wc: wc.role == "target"
        and config["models"]["target"]["require_mtp"],
        source=lambda wc: model_source(wc.role),
    script:
        "../scripts/verify_model.py"
