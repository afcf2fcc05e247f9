# llama.cpp at the pinned commit: fetch (every download: the git clone, or the archive) -> source tree -> CMake build
# with a manifest; once per build (config 'builds'), each in its folder resources/llama.cpp{build_dir}.
# Each rule declares its code (entry script + package modules) as input, so the cache key changes with it.
# These rules may be shared between workdirs with `--cache` (Snakemake's between-workflow cache, keyed by
# code, params and inputs); Snakemake then forbids `benchmark:`, so the build times itself in its manifest.
# The cache stores files without their execute bits, so `llama_cpp_install` copies the binaries the cells run
# into place, executable, after checking them against the build manifest's sha256.


rule llama_cpp_fetch:
    input:
        code=code("llama_cpp_fetch.py"),
    output:
        directory(LLAMA_FETCHED) if FETCHED_GIT else LLAMA_FETCHED,
    log:
        "logs/llama_cpp{build_dir}/fetch.log",
    cache: "omit-software"
    priority: PREPARE_PRIORITY
    retries: 2
    conda:
        "../envs/build.yaml"
    threads: rule_threads("llama_cpp_fetch")
    resources:
        **rule_resources("llama_cpp_fetch"),
    params:
        source=llama_source,
    script:
        "../scripts/llama_cpp_fetch.py"


rule llama_cpp_source:
    input:
        fetched=LLAMA_FETCHED,
        code=code("llama_cpp_source.py"),
    output:
        directory(f"{LLAMA_ROOT}/src"),
    log:
        "logs/llama_cpp{build_dir}/source.log",
    cache: "omit-software"
    priority: PREPARE_PRIORITY
    retries: 1
    conda:
        "../envs/build.yaml"
    threads: rule_threads("llama_cpp_source")
    resources:
        **rule_resources("llama_cpp_source"),
    params:
        source=llama_source,
    script:
        "../scripts/llama_cpp_source.py"


rule llama_cpp_build:
    input:
        source=f"{LLAMA_ROOT}/src",
        code=code("llama_cpp_build.py"),
    output:
        directory(f"{LLAMA_ROOT}/build"),
    log:
        "logs/llama_cpp{build_dir}/build.log",
    cache: "omit-software"
    priority: PREPARE_PRIORITY
    conda:
        "../envs/build.yaml"
    threads: rule_threads("llama_cpp_build")
    resources:
        **rule_resources("llama_cpp_build"),
        cpus=every_cpu,
    params:
        cmake_args=llama_setting("cmake_args"),
        backend=llama_setting("backend"),
        targets=llama_setting("targets"),
        host_cpu=HOST_CPU,
        work_dir=llama_work_dir,
    script:
        "../scripts/llama_cpp_build.py"


rule llama_cpp_install:
    input:
        build=f"{LLAMA_ROOT}/build",
        code=code("llama_cpp_install.py"),
    output:
        directory(f"{LLAMA_ROOT}/bin"),
    log:
        "logs/llama_cpp{build_dir}/install.log",
    benchmark:
        "benchmarks/llama_cpp{build_dir}/install.tsv"
    priority: PREPARE_PRIORITY
    conda:
        "../envs/build.yaml"
    threads: rule_threads("llama_cpp_install")
    resources:
        **rule_resources("llama_cpp_install"),
    script:
        "../scripts/llama_cpp_install.py"
