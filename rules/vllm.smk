# vLLM builds (config builds[].engine: vllm): one environment per build, checked by importing vLLM's server there
# and described by a manifest that the build's condition setups read (its interpreter starts each cell's server).
# Without vllm.python the workflow makes the venv from the pinned requirements file (pip, so on the submitting host
# of a cluster run, like the other downloads). Its functions (vllm_requirements, ...) are in rules/common.smk.

if VLLM_BUILDS:

    rule vllm_env:
        input:
            requirements=vllm_requirements,
            code=code("vllm_env.py"),
        output:
            sb_builds.vllm_manifest("{label}"),
        log:
            f"logs/vllm/{{label}}/env.log",
        benchmark:
            f"benchmarks/vllm/{{label}}/env.tsv"
        wildcard_constraints:
            label="|".join(re.escape(label) for label in VLLM_BUILDS),
        priority: PREPARE_PRIORITY
        conda:
            "../envs/pipeline.yaml"
        params:
            python=lambda wc: VLLM_BUILDS[wc.label].vllm.get("python"),
            requirements=lambda wc: config_path(
                VLLM_BUILDS[wc.label].vllm["requirements"]
            ),
            venv=lambda wc: f"{sb_builds.vllm_dir(wc.label)}/venv",
        script:
            "../scripts/vllm_env.py"

    # pip's downloads: on the submitting host of a cluster run
    workflow.localrules("vllm_env")
