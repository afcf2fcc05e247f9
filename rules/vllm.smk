# vLLM builds (config builds[].engine: vllm): one environment per build, checked by importing vLLM's server there
# and described by a manifest that the build's condition setups read (its interpreter starts each cell's server).
# Without vllm.python the workflow makes the venv from the pinned requirements file (pip, so on the submitting host
# of a cluster run, like the other downloads). Its functions are
# specbench.workflow.plan.Plan's.

if PLAN.vllm_builds:

    rule vllm_env:
        input:
            requirements=PLAN.vllm_requirements,
            code=PLAN.code("vllm_env.py"),
        output:
            "resources/vllm/{label}/manifest.json",
        log:
            "logs/vllm/{label}/env.log",
        benchmark:
            "benchmarks/vllm/{label}/env.tsv"
        wildcard_constraints:
            label="|".join(re.escape(label) for label in PLAN.vllm_builds),
        priority: PLAN.prepare_priority
        conda:
            "../envs/pipeline.yaml"
        params:
            python=lambda wc: PLAN.vllm_builds[wc.label].vllm.get("python"),
            requirements=lambda wc: PLAN.config_path(
                PLAN.vllm_builds[wc.label].vllm["requirements"]
            ),
            venv=lambda wc: f"resources/vllm/{wc.label}/venv",
        script:
            "../scripts/vllm_env.py"

    # pip's downloads: on the submitting host of a cluster run
    workflow.localrules("vllm_env")
