# One cell = one fresh llama-server on 127.0.0.1, one request, one atomically written record.


rule cell:
    input:
        unpack(cell_inputs),
    output:
        CELL_PATTERN,
    log:
        server=f"{CELL_STEM}.server.log",
        run=f"logs/{CELL_STEM}.log",
    benchmark:
        f"benchmarks/{CELL_STEM}.tsv"
    conda:
        "../envs/pipeline.yaml"
    threads: workflow.cores
    resources:
        gpu=1,
        runtime=lambda wc: int(
            (
                config["server"]["startup_timeout_s"]
                + config["server"]["request_timeout_s"]
            )
            / 60
        )
        + 1,
    params:
        server=config["server"],
        condition=lambda wc: config["conditions"][wc.condition],
        max_tokens=lambda wc: config["tasks"][wc.task].get(
            "max_tokens", config["max_tokens"]
        ),
        reasoning=config["reasoning"],
        seed=config["seed"],
    script:
        "../scripts/run_cell.py"
